import { Parser } from "htmlparser2";

/**
 * Open and click tracking in a message's HTML (docs/tracking.md#what-is-rewritten), by splicing
 * the source at the offsets htmlparser2 reports: everything but the rewritten `href` values and
 * the inserted image stays byte for byte as the sender wrote it (conditional comments, odd
 * markup, whitespace), which a parse-and-serialise round trip would not keep.
 */
export interface TrackingRewrite {
  /** The open image's URL; null: no image. */
  pixelUrl: string | null;
  /** The redirect URL for a link to `url`; null: clicks are not tracked. Null for one link: that link is left alone. */
  clickUrl: ((url: string) => string | null) | null;
}

interface Splice {
  start: number;
  end: number;
  text: string;
}

export function rewriteHtml(html: string, rewrite: TrackingRewrite): string {
  const splices: Splice[] = [];
  let bodyClose: number | null = null;
  let href: { start: number; end: number; value: string } | null = null;
  let inAnchor = false;
  const parser = new Parser(
    {
      onopentagname(name) {
        inAnchor = name === "a";
        href = null;
      },
      onattribute(name, value) {
        // The first href is the one a browser follows; later duplicates are ignored by it and by us.
        if (inAnchor && name === "href" && href === null) href = { start: parser.startIndex, end: parser.endIndex, value };
      },
      onopentag(name, attribs) {
        const link = href as { start: number; end: number; value: string } | null;
        if (name !== "a" || link === null || rewrite.clickUrl === null) return;
        if ((attribs["data-mailroom-track"] ?? "").trim().toLowerCase() === "false") return;
        const url = trackableUrl(link.value);
        const redirect = url === null ? null : rewrite.clickUrl(url);
        if (redirect !== null) splices.push({ start: link.start, end: link.end, text: `href="${escapeAttribute(redirect)}"` });
      },
      onclosetag(name, isImplied) {
        if (name === "body" && !isImplied) bodyClose = parser.startIndex;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();

  if (rewrite.pixelUrl !== null) {
    // At the end of the body, so that the image loads only once the message has been rendered;
    // after everything when the HTML has no closing body tag.
    const at = bodyClose ?? html.length;
    splices.push({ start: at, end: at, text: pixel(rewrite.pixelUrl) });
  }
  let out = "";
  let from = 0;
  for (const splice of splices.sort((a, b) => a.start - b.start)) {
    out += html.slice(from, splice.start) + splice.text;
    from = splice.end;
  }
  return out + html.slice(from);
}

/**
 * The absolute http(s) URL an href leads to, as a browser reads it, or null for anything else.
 * The value is the entity-decoded attribute (so `jav&#x61;script:` is seen as `javascript:`);
 * browsers then strip leading and trailing C0 controls and spaces and drop tabs and newlines
 * anywhere (WHATWG URL), which is done here too before the scheme is looked at. Relative URLs
 * (which a `<base>` or the mail client would resolve), `mailto:`, `tel:`, `#anchors`,
 * `javascript:`, `data:` and every other scheme are never rewritten.
 */
export function trackableUrl(href: string): string | null {
  // eslint-disable-next-line no-control-regex
  const cleaned = href.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "").replace(/[\t\n\r]/g, "");
  if (!/^https?:\/\//i.test(cleaned)) return null;
  let url: URL;
  try {
    url = new URL(cleaned);
  } catch {
    return null;
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") return null;
  // Serialised by the URL parser: the redirect's Location gets a well-formed URL, with no raw
  // space or control character that could split or bend the header.
  return url.href;
}

function pixel(url: string): string {
  return `<img src="${escapeAttribute(url)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0" />`;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
