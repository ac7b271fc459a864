/**
 * Whether a header field describes the MIME body (RFC 2045, 2183, 2392: Content-Type,
 * Content-Transfer-Encoding, Content-Disposition, Content-ID, Content-Location, ...). Mailroom
 * composes the body, so such a field given at the top of a message would contradict it, or worse,
 * follow it: a top-level Content-Disposition: attachment turns the whole message into a file.
 * Content-Language (RFC 3282) says what language the message is in, not how it is built, and stays
 * the sender's.
 */
export function describesMimeBody(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith("content-") && lower !== "content-language";
}
