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

/** Which links a plan takes: the first `maxLinks` whose URL is trackable and at most `maxUrlBytes` long. */
export interface RewriteLimits {
  maxLinks: number;
  maxUrlBytes: number;
}

/**
 * Where a message's HTML changes, found by parsing it once: a message rendered for each of its
 * recipients is parsed once, not once per recipient (each rendering only splices its own tokens in).
 */
export interface RewritePlan {
  /** The `href` attributes to replace, in document order, with the URL each leads to. */
  links: Array<{ start: number; end: number; url: string }>;
  /** Where the open image goes: the closing `</body>`, else the end. */
  pixelAt: number;
}

export function planRewrite(html: string, limits: RewriteLimits = { maxLinks: Infinity, maxUrlBytes: Infinity }): RewritePlan {
  const links: RewritePlan["links"] = [];
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
        if (name !== "a" || link === null || links.length >= limits.maxLinks) return;
        if ((attribs["data-mailroom-track"] ?? "").trim().toLowerCase() === "false") return;
        const url = trackableUrl(link.value);
        if (url !== null && Buffer.byteLength(url) <= limits.maxUrlBytes) links.push({ start: link.start, end: link.end, url });
      },
      onclosetag(name, isImplied) {
        if (name === "body" && !isImplied) bodyClose = parser.startIndex;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  // At the end of the body, so that the image loads only once the message has been rendered;
  // after everything when the HTML has no closing body tag.
  return { links, pixelAt: bodyClose ?? html.length };
}

/** The HTML `plan` was made from, with one rendering's open image and click URLs spliced in. */
export function applyRewrite(html: string, plan: RewritePlan, rewrite: TrackingRewrite): string {
  const parts: string[] = [];
  let from = 0;
  const splice = (start: number, end: number, text: string) => {
    parts.push(html.slice(from, start), text);
    from = end;
  };
  let pixel = rewrite.pixelUrl === null ? null : pixelTag(rewrite.pixelUrl);
  for (const link of rewrite.clickUrl === null ? [] : plan.links) {
    if (pixel !== null && plan.pixelAt <= link.start) {
      splice(plan.pixelAt, plan.pixelAt, pixel);
      pixel = null;
    }
    const redirect = rewrite.clickUrl!(link.url);
    if (redirect !== null) splice(link.start, link.end, `href="${escapeHtml(redirect)}"`);
  }
  if (pixel !== null) splice(plan.pixelAt, plan.pixelAt, pixel);
  parts.push(html.slice(from));
  return parts.join("");
}

export function rewriteHtml(html: string, rewrite: TrackingRewrite, limits?: RewriteLimits): string {
  return applyRewrite(html, planRewrite(html, limits), rewrite);
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

function pixelTag(url: string): string {
  return `<img src="${escapeHtml(url)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0" />`;
}

/** Text or a quoted attribute value made safe to put in HTML. */
export function escapeHtml(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}
