import { describe, expect, it } from "vitest";
import { bodyText, DERIVED_TEXT_MAX } from "../../src/inbound/body-text.js";

describe("bodyText (a received message's plain text)", () => {
  it("is the message's own text when it has some, however long, and the HTML's text when it has only HTML", () => {
    const long = "a line of the message's own text\n".repeat(40_000);
    expect(bodyText(long, "<p>other</p>")).toBe(long);
    expect(bodyText("", "<p>Thanks!</p><blockquote>Earlier</blockquote>")).toBe("Thanks!\n\n> Earlier");
    expect(bodyText(" \n", "<p>Thanks!</p>")).toBe("Thanks!");
    expect(bodyText(undefined, false)).toBeNull();
    expect(bodyText("", false)).toBe("");
  });

  it("derives no more text than the markup is long, and at most DERIVED_TEXT_MAX, however much text the markup makes (each <hr> of 4 characters is 79)", () => {
    // 80 KB of <hr> would make 1.5 MiB of dashes; small enough to parse quickly on a loaded
    // machine (the 1 MiB of them this used took 4 s of the 5 s allowed). textFromHtml's cap (as
    // long as the markup) binds before DERIVED_TEXT_MAX here, as for any markup within
    // DERIVED_TEXT_SOURCE_MAX.
    const html = `<p>Hi</p>${"<hr>".repeat(20_000)}`;
    const text = bodyText(undefined, html)!;
    expect(text.startsWith("Hi\n\n---")).toBe(true);
    expect(text.length).toBeLessThanOrEqual(Math.min(html.length, DERIVED_TEXT_MAX));
    expect(text.length).toBeGreaterThan(html.length - 100);
  });
});
