import DOMPurify, { type Config } from "dompurify";

// The policies put first in a previewed email. The iframe's empty `sandbox` already stops
// scripts, forms, popups and navigation of the page; this CSP stops every request the email
// could make (images, fonts, stylesheets, prefetches), so opening a message tells its sender
// nothing. Remote images are opt-in, because a tracking pixel reports when and where the message
// was read.
const BLOCK_REMOTE = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
const ALLOW_REMOTE_IMAGES = "default-src 'none'; style-src 'unsafe-inline'; img-src data: https: http:";

const PURIFY_CONFIG: Config & { RETURN_DOM: true } = {
  WHOLE_DOCUMENT: true,
  RETURN_DOM: true,
  // Most of these are outside DOMPurify's allow-list already; naming them keeps the promise
  // visible: no scripts, no <meta http-equiv="refresh">, no <base> to re-point links, no forms,
  // no nested browsing contexts or plugins.
  FORBID_TAGS: [
    "script",
    "noscript",
    "meta",
    "base",
    "link",
    "form",
    "input",
    "button",
    "select",
    "textarea",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "portal",
  ],
  FORBID_ATTR: ["action", "formaction", "ping", "http-equiv"],
};

// A srcdoc document resolves relative URLs against the dashboard's own address, so an email's
// `<img src="x">` would call this server once remote images are allowed. An email has no base
// to be relative to: such URLs are dropped (in-page `#anchors` stay).
const URL_ATTRIBUTES = ["src", "href", "xlink:href", "background", "poster", "srcset"];
const ABSOLUTE = /^\s*([a-z][a-z0-9+.-]*:|#)/i;

const purify = DOMPurify(window);
purify.addHook("afterSanitizeAttributes", (node) => {
  for (const name of URL_ATTRIBUTES) {
    const value = node.getAttribute(name);
    if (value === null) continue;
    const urls = name === "srcset" ? value.split(",").map((candidate) => candidate.trim().split(/\s+/)[0] ?? "") : [value];
    if (!urls.every((url) => ABSOLUTE.test(url))) node.removeAttribute(name);
  }
});

/**
 * An email's HTML as a whole document safe to put in `<iframe sandbox="" srcdoc>`: sanitised
 * with DOMPurify (event handlers and `javascript:` URLs go too), and a Content-Security-Policy
 * meta element placed before anything that could load. The parsing happens in DOMPurify's inert
 * document, which runs nothing and fetches nothing (Chromium still reports the page CSP's
 * refusals of what it parsed, such as an onerror attribute, in the console).
 */
export function emailDocument(html: string, { remoteImages }: { remoteImages: boolean }): string {
  const root = purify.sanitize(html, PURIFY_CONFIG) as HTMLElement;
  const doc = root.ownerDocument;
  const head = root.querySelector("head") ?? root.insertBefore(doc.createElement("head"), root.firstChild);
  const csp = doc.createElement("meta");
  csp.setAttribute("http-equiv", "Content-Security-Policy");
  csp.setAttribute("content", remoteImages ? ALLOW_REMOTE_IMAGES : BLOCK_REMOTE);
  // Browsers may resolve the hosts of links ahead of a click; that too would reach the sender.
  const noPrefetch = doc.createElement("meta");
  noPrefetch.setAttribute("http-equiv", "x-dns-prefetch-control");
  noPrefetch.setAttribute("content", "off");
  const referrer = doc.createElement("meta");
  referrer.setAttribute("name", "referrer");
  referrer.setAttribute("content", "no-referrer");
  head.prepend(csp, noPrefetch, referrer);
  return `<!DOCTYPE html>${root.outerHTML}`;
}

const REMOTE_URL = /^\s*https?:/i;
const REMOTE_URL_IN_CSS = /url\(\s*['"]?\s*https?:/i;

/**
 * Whether the email, as the preview shows it (sanitised as emailDocument does), has an image that
 * would come from another server: an `src`, `srcset`, `background` or `poster` URL, an SVG
 * `<image>`, or a CSS `url()`. Only then is there anything for "Load remote images" to load.
 */
export function hasRemoteImages(html: string): boolean {
  const root = purify.sanitize(html, PURIFY_CONFIG) as HTMLElement;
  return [root, ...root.querySelectorAll("*")].some((element) => {
    if (["src", "background", "poster"].some((name) => REMOTE_URL.test(element.getAttribute(name) ?? ""))) return true;
    if ((element.getAttribute("srcset") ?? "").split(",").some((candidate) => REMOTE_URL.test(candidate))) return true;
    if (element.localName === "image" && ["href", "xlink:href"].some((name) => REMOTE_URL.test(element.getAttribute(name) ?? ""))) return true;
    if (REMOTE_URL_IN_CSS.test(element.getAttribute("style") ?? "")) return true;
    return element.localName === "style" && REMOTE_URL_IN_CSS.test(element.textContent ?? "");
  });
}
