import * as htmlToText from "html-to-text";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { DERIVED_TEXT_CUT, DERIVED_TEXT_MAX_TAGS, DERIVED_TEXT_MIN_CHARS, textFromHtml } from "../../src/domain/text-from-html.js";

// What html-to-text hands back before textFromHtml cuts it: the text it built in memory; and the
// most tags it was given to parse, each an element of its document tree.
const built = vi.hoisted(() => ({ longest: 0, parsedTags: 0 }));
vi.mock("html-to-text", async (importOriginal) => {
  const actual = await importOriginal<typeof htmlToText>();
  const compile: typeof actual.compile = (options) => {
    const convert = actual.compile(options) as (html: string, metadata?: unknown) => string;
    return ((html: string, metadata?: unknown) => {
      built.parsedTags = Math.max(built.parsedTags, html.split("<").length - 1);
      const text = convert(html, metadata);
      built.longest = Math.max(built.longest, text.length);
      return text;
    }) as ReturnType<typeof actual.compile>;
  };
  return { ...actual, compile };
});

describe("textFromHtml", () => {
  it("derives the text of ordinary html whole", () => {
    const html = `<h1>Your order</h1>${"<p>Thank you for your order of <a href=\"https://shop.example/p/1\">the blue lamp</a>.</p>".repeat(5000)}`;
    const text = textFromHtml(html);
    expect(text.startsWith("YOUR ORDER\n\nThank you for your order of the blue lamp")).toBe(true);
    expect(text.endsWith(DERIVED_TEXT_CUT)).toBe(false);
    expect(text.length).toBeLessThan(html.length);
  });

  it("never cuts the text of short html, however its markup is written", () => {
    const html = "<hr>".repeat(500); // 2,000 characters of html, 40,000 of text
    const text = textFromHtml(html);
    expect(text.length).toBeGreaterThan(html.length);
    expect(text.length).toBeLessThanOrEqual(DERIVED_TEXT_MIN_CHARS);
    expect(text.endsWith(DERIVED_TEXT_CUT)).toBe(false);
  });

  it("cuts text far longer than its html at a line break, at most as long as the html", () => {
    const html = "<hr>".repeat(50_000); // each a line of 78 dashes: 4 MB of text from 200 KB
    const text = textFromHtml(html);
    expect(text.length).toBeLessThanOrEqual(html.length);
    expect(text.length).toBeGreaterThan(html.length - 100);
    expect(text.endsWith(`${"-".repeat(78)}${DERIVED_TEXT_CUT}`)).toBe(true);
  });

  it("cuts deeply nested quotes, whose prefixes repeat on every line", () => {
    const html = `${"<blockquote>".repeat(60)}${"a<br>".repeat(20_000)}${"</blockquote>".repeat(60)}`;
    const text = textFromHtml(html);
    expect(text.length).toBeLessThanOrEqual(html.length);
    expect(text.endsWith(DERIVED_TEXT_CUT)).toBe(true);
  });

  it("never splits a character of two UTF-16 units where a line has no break to cut at", () => {
    // A heading is upper-cased, and "ß" becomes "SS": one line without a space (never wrapped),
    // longer than its html, with the cut falling between the two halves of an emoji.
    const html = `<h1>${"ß😀".repeat(100_002)}</h1>`;
    const text = textFromHtml(html);
    expect(text.endsWith(DERIVED_TEXT_CUT)).toBe(true);
    expect(text.length).toBeLessThanOrEqual(html.length);
    expect(() => encodeURIComponent(text)).not.toThrow();
  });

  it("numbers a roman list in decimal past 3999, where html-to-text wrote 'undefined' or threw", () => {
    expect(textFromHtml('<ol type="I" start="3998"><li>a</li><li>b</li></ol>')).toBe(" MMMCMXCVIII. a\n MMMCMXCIX.   b");
    expect(textFromHtml('<ol type="i" start="3999"><li>a</li><li>b</li></ol>')).toBe(" 3999. a\n 4000. b");
    expect(textFromHtml('<ol type="I" start="10000"><li>a</li></ol>')).toBe(" 10000. a");
    expect(textFromHtml('<ol type="i" start="0"><li>a</li></ol>')).toBe(" 0. a");
  });

  it("reads start as browsers do (HTML's rules for parsing integers: its leading digits, else 1), where html-to-text took 1e400 for Infinity and 1.5 for 1.5", () => {
    expect(textFromHtml('<ol type="i" start="1.23456"><li>a</li></ol>')).toBe(" i. a");
    expect(textFromHtml('<ol start="1e400"><li>a</li></ol>')).toBe(" 1. a");
    expect(textFromHtml('<ol start=" +7x"><li>a</li></ol>')).toBe(" 7. a");
    expect(textFromHtml('<ol start="-3"><li>a</li></ol>')).toBe(" -3. a");
    expect(textFromHtml('<ol type="a" start="none"><li>a</li></ol>')).toBe(" a. a");
  });

  it("numbers a lettered list in decimal from below 1, where html-to-text wrote a backquote, a bracket or NUL", () => {
    expect(textFromHtml('<ol type="a" start="26"><li>x</li><li>y</li></ol>')).toBe(" z.  x\n aa. y");
    expect(textFromHtml('<ol type="A" start="0"><li>x</li><li>y</li></ol>')).toBe(" 0. x\n 1. y");
    expect(textFromHtml('<ol type="a" start="-3"><li>x</li></ol>')).toBe(" -3. x");
    expect(textFromHtml('<ol type="A" start="1e400"><li>x</li></ol>')).toBe(" A. x");
  });
});

describe("textFromHtml's work and memory", () => {
  beforeEach(() => {
    built.longest = 0;
    built.parsedTags = 0;
  });

  it("derives the text of markup with more tags than it parses from its first ones, and says where it was cut", () => {
    const html = `<p>First</p>${"<br>".repeat(DERIVED_TEXT_MAX_TAGS)}<p>Last</p>`;
    const text = textFromHtml(html);
    expect(text).toBe(`First${DERIVED_TEXT_CUT}`);
    expect(built.parsedTags).toBe(DERIVED_TEXT_MAX_TAGS);
    // With as many tags as it parses, the text is whole.
    const whole = `<p>First</p>${"<br>".repeat(DERIVED_TEXT_MAX_TAGS - 4)}<p>Last</p>`;
    expect(textFromHtml(whole)).toMatch(/^First\n+Last$/);
  });

  it("parses at most its share of tags from markup that is nothing but elements (10 MB of <br>: 850 MB of document tree whole)", () => {
    const html = "<br>".repeat(2_621_440);
    expect(textFromHtml(html)).toBe(DERIVED_TEXT_CUT);
    expect(built.parsedTags).toBe(DERIVED_TEXT_MAX_TAGS);
  });

  it("builds little more text than the cap from a run of <hr>, however many follow", () => {
    const html = "<hr>".repeat(50_000); // 200 KB of html; each <hr> a line of 78 dashes: 4 MB uncut
    const text = textFromHtml(html);
    expect(text.endsWith(`${"-".repeat(78)}${DERIVED_TEXT_CUT}`)).toBe(true);
    // The dashes count towards the cap, the line breaks between them do not.
    expect(built.longest).toBeLessThanOrEqual(html.length * 1.05);
  });

  it("builds no more text than the cap from deeply nested quotes and lists, whose prefixes repeat on every line", () => {
    for (const open of ["<blockquote>", "<ul><li>", '<ol start="100000000000000000000"><li>']) {
      built.longest = 0;
      const html = `${open.repeat(60)}${"a<br>".repeat(20_000)}`; // ~2.5 MB of text uncut
      const text = textFromHtml(html);
      expect(text.endsWith(DERIVED_TEXT_CUT)).toBe(true);
      expect(built.longest, open).toBeLessThanOrEqual(html.length + 80);
    }
  });

  it("derives the text of markup nested deeper than the call stack goes instead of throwing", () => {
    for (const [open, close] of [["<div>", "</div>"], ["<blockquote>", "</blockquote>"], ["<ol><li>", "</li></ol>"]] as const) {
      const html = `<p>Hello</p>${open.repeat(5_000)}deep${close.repeat(5_000)}<p>Bye</p>`;
      const text = textFromHtml(html);
      expect(text.startsWith("Hello"), open).toBe(true);
      expect(text.endsWith("Bye"), open).toBe(true);
    }
  });

  it("derives the same text as html-to-text unbounded for ordinary messages", () => {
    const samples = [
      "<p>Hi Ana,</p><p>Your order <b>#1042</b> has shipped.</p><hr><p>Questions? <a href=\"https://shop.example/help\">Help</a></p>",
      "<h1>Receipt</h1><table><tr><td>Lamp</td><td>$20</td></tr><tr><td>Bulb</td><td>$2</td></tr></table><hr/><p>Thanks</p>",
      "<p>Thanks!</p><div class=\"gmail_quote\">On Mon wrote:<br><blockquote>Earlier<br><blockquote>Even earlier<hr>sig</blockquote></blockquote></div>",
      "<blockquote></blockquote>text<blockquote><p></p></blockquote>",
      "<ul><li>one</li><li>two<ul><li>two a</li><li><p>two b</p><p>more</p></li></ul></li><li></li></ul>after",
      "<ol start=\"9\"><li>nine</li><li>ten<ol type=\"a\"><li>x</li><li>y<br>z</li></ol></li></ol>",
      "before<ul><!-- nothing --></ul>between<ol>\n  </ol>after<ul><p>not an item</p></ul>end",
      "<div><li>stray item</li></div><p>a<hr>b</p><pre>  pre\n  formatted<hr>  </pre>",
      `<blockquote>${"<ul><li>".repeat(12)}deep item with enough words to wrap the line at its reduced width${"</li></ul>".repeat(12)}</blockquote>`,
      `<p>${"word ".repeat(400)}</p><blockquote>${"quoted words ".repeat(200)}</blockquote>`,
    ];
    for (const html of samples) expect(textFromHtml(html), html).toBe(htmlToText.convert(html, { wordwrap: 78 }));
  });
});
