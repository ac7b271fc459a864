import { describe, expect, it } from "vitest";
import { rewriteHtml, trackableUrl } from "../../src/tracking/html.js";
import { classifyClick, classifyOpen, CLICK_TOO_SOON_MS } from "../../src/tracking/machine.js";

const PIXEL = "https://t.example/t/o/TOKEN";
/** Rewrites every trackable link to a recognisable redirect that names the original. */
const clicks = (html: string) => rewriteHtml(html, { pixelUrl: null, clickUrl: (url) => `https://t.example/t/c/${encodeURIComponent(url)}` });
const hrefs = (html: string) => [...html.matchAll(/href\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/gi)].map((m) => m[2] ?? m[3] ?? m[4]);

describe("rewriteHtml", () => {
  it("rewrites http and https links to the click URL and leaves the rest of the markup byte for byte", () => {
    const html = `<!doctype html><html><body>\n<!--[if mso]><b>Outlook</b><![endif]-->\n<p class=x>Hi <A HREF="https://shop.example/a?x=1&amp;y=2" target=_blank>shop</A> and <a href='http://old.example/'>old</a>.</p>\n</body></html>`;
    const out = clicks(html);
    expect(hrefs(out)).toEqual([`https://t.example/t/c/${encodeURIComponent("https://shop.example/a?x=1&y=2")}`, `https://t.example/t/c/${encodeURIComponent("http://old.example/")}`]);
    expect(out.replace(/href="[^"]*"/g, "H")).toBe(html.replace(/HREF="[^"]*"/, "H").replace(/href='[^']*'/, "H"));
  });

  it("never rewrites mailto:, tel:, anchors, relative URLs or other schemes", () => {
    const links = ["mailto:ada@example.com", "tel:+15551234", "#top", "/relative", "relative/page", "//cdn.example/x", "ftp://files.example/", "data:text/html,hi", "sms:+1555", ""];
    const html = links.map((href) => `<a href="${href}">x</a>`).join("") + "<a>no href</a><a href>bare</a>";
    expect(clicks(html)).toBe(html);
  });

  it("never rewrites javascript: however it is disguised (case, whitespace, entities, control characters)", () => {
    const hostile = [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      " \tjavascript:alert(1)",
      "java\nscript:alert(1)",
      "jav&#x61;script:alert(1)",
      "jav&#97;script:alert(1)",
      "&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)",
      "javascript&colon;alert(1)",
      "\u0001javascript:alert(1)",
      "vbscript:msgbox(1)",
    ];
    for (const href of hostile) {
      const html = `<p><a href="${href}">click</a></p>`;
      expect(clicks(html), href).toBe(html);
    }
    // Unquoted and single-quoted forms too.
    expect(clicks(`<a href=javascript:alert(1)>x</a><a href='javascript:alert(1)'>y</a>`)).toBe(`<a href=javascript:alert(1)>x</a><a href='javascript:alert(1)'>y</a>`);
  });

  it("leaves links marked data-mailroom-track=\"false\" alone, and rewrites only the first of duplicate hrefs", () => {
    const html = `<a data-mailroom-track="false" href="https://keep.example/">a</a><a href="https://one.example/" href="javascript:x">b</a>`;
    const out = clicks(html);
    expect(out).toContain(`<a data-mailroom-track="false" href="https://keep.example/">a</a>`);
    expect(out).toContain(`<a href="https://t.example/t/c/${encodeURIComponent("https://one.example/")}" href="javascript:x">b</a>`);
  });

  it("does not rewrite what only looks like a link: text, comments, scripts and attributes of other tags", () => {
    const html = `<!-- <a href="https://c.example/">c</a> --><script>var s='<a href="https://s.example/">'</script><img src="https://i.example/x.png" href="https://i.example/"><p>https://text.example/</p>`;
    expect(clicks(html)).toBe(html);
  });

  it("inserts the open image at the end of the body, or at the end when there is no closing body tag", () => {
    const withBody = rewriteHtml(`<html><body><p>Hi</p></body></html>`, { pixelUrl: PIXEL, clickUrl: null });
    expect(withBody).toMatch(/^<html><body><p>Hi<\/p><img src="https:\/\/t\.example\/t\/o\/TOKEN" width="1" height="1" alt="" [^>]*\/><\/body><\/html>$/);
    expect(rewriteHtml(`<p>Hi</p>`, { pixelUrl: PIXEL, clickUrl: null })).toMatch(/^<p>Hi<\/p><img src="https:\/\/t\.example\/t\/o\/TOKEN"[^>]*\/>$/);
    // A "</body>" inside a comment is not the end of the body.
    expect(rewriteHtml(`<body><!-- </body> --><p>x</p></body>`, { pixelUrl: PIXEL, clickUrl: null })).toMatch(/^<body><!-- <\/body> --><p>x<\/p><img [^>]*\/><\/body>$/);
  });

  it("escapes what it writes into attributes", () => {
    const out = rewriteHtml(`<a href="https://a.example/?q=1">x</a>`, { pixelUrl: `https://t.example/o/"><script>`, clickUrl: () => `https://t.example/c/"&<>` });
    expect(out).toContain(`href="https://t.example/c/&quot;&amp;&lt;&gt;"`);
    expect(out).toContain(`src="https://t.example/o/&quot;&gt;&lt;script&gt;"`);
  });

  it("leaves a link alone when the click URL builder declines it", () => {
    const html = `<a href="https://a.example/">x</a>`;
    expect(rewriteHtml(html, { pixelUrl: null, clickUrl: () => null })).toBe(html);
  });
});

describe("trackableUrl", () => {
  it("gives the URL a browser would follow, serialised, or null", () => {
    expect(trackableUrl("  https://Shop.Example/a b\n")).toBe("https://shop.example/a%20b");
    expect(trackableUrl("HTTP://x.example")).toBe("http://x.example/");
    expect(trackableUrl("https://")).toBeNull();
    expect(trackableUrl("https:/x.example")).toBeNull();
    expect(trackableUrl("javascript:alert(1)//https://x")).toBeNull();
  });
});

describe("machine opens and clicks", () => {
  const at = Date.parse("2026-11-21T10:00:00Z");
  const browser = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36";
  const later = { at: at + 60_000, issuedAt: at };

  it("flags Apple Mail Privacy Protection and Yahoo's prefetching proxy, and counts Gmail's proxy as a person's open", () => {
    expect(classifyOpen({ method: "GET", userAgent: "Mozilla/5.0", ip: "203.0.113.9", ...later })).toMatchObject({ machine: true, reason: "apple_privacy_protection" });
    expect(classifyOpen({ method: "GET", userAgent: browser, ip: "17.58.1.2", ...later })).toMatchObject({ machine: true, proxy: "apple" });
    expect(classifyOpen({ method: "GET", userAgent: "YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html", ip: "98.136.1.1", ...later })).toMatchObject({ machine: true, proxy: "yahoo" });
    expect(classifyOpen({ method: "GET", userAgent: "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)", ip: "66.102.1.1", ...later })).toEqual({ machine: false, reason: null, proxy: "gmail" });
    expect(classifyOpen({ method: "GET", userAgent: browser, ip: "203.0.113.9", ...later })).toEqual({ machine: false, reason: null, proxy: null });
  });

  it("flags link scanners: HEAD requests, no or a scanner's User-Agent, and clicks within seconds of sending", () => {
    expect(classifyClick({ method: "HEAD", userAgent: browser, ip: null, ...later }).reason).toBe("head_request");
    expect(classifyClick({ method: "GET", userAgent: null, ip: null, ...later }).reason).toBe("no_user_agent");
    expect(classifyClick({ method: "GET", userAgent: "Mozilla/5.0 (compatible; Barracuda Sentinel)", ip: null, ...later }).reason).toBe("scanner_user_agent");
    expect(classifyClick({ method: "GET", userAgent: "python-requests/2.31", ip: null, ...later }).reason).toBe("scanner_user_agent");
    expect(classifyClick({ method: "GET", userAgent: browser, ip: null, at: at + CLICK_TOO_SOON_MS - 1, issuedAt: at }).reason).toBe("too_soon");
    expect(classifyClick({ method: "GET", userAgent: browser, ip: null, at: at + CLICK_TOO_SOON_MS, issuedAt: at }).machine).toBe(false);
  });

  it("flags crawlers named …bot, but not the browser of a CUBOT phone", () => {
    for (const crawler of ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Mozilla/5.0 (compatible; bingbot/2.0)", "Slackbot-LinkExpanding 1.0", "Mozilla/5.0 (compatible; SemrushBot/7~bl)"]) {
      expect(classifyClick({ method: "GET", userAgent: crawler, ip: null, ...later }).reason, crawler).toBe("scanner_user_agent");
    }
    const cubot = "Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36";
    expect(classifyClick({ method: "GET", userAgent: cubot, ip: null, ...later })).toEqual({ machine: false, reason: null, proxy: null });
  });
});
