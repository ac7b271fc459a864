/**
 * Why a URL's user name or password could never be sent, or null when it can be. WHATWG URL
 * parsing and the contract's `format: uri` take any `%XX`, but Node's http.request decodes the
 * credentials with decodeURIComponent (Basic credentials are UTF-8) and throws, synchronously,
 * on an escape that is not UTF-8, such as Latin-1's `%E9`. Refused where such a URL is given,
 * it cannot fail later, where nobody would see why.
 */
export function unsendableCredentials(url: URL): string | null {
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
    return null;
  } catch {
    return "holds a percent-escape that is not UTF-8 (%E9 for é is Latin-1; UTF-8 is %C3%A9), which no request can send";
  }
}
