import { describe, expect, it } from "vitest";
import { DERIVED_TEXT_CUT, DERIVED_TEXT_MIN_CHARS, textFromHtml } from "../../src/domain/text-from-html.js";

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
});
