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

  it("derives at most DERIVED_TEXT_MAX characters, however much text the markup makes (1 MiB of <hr> is ~20 MiB of dashes)", () => {
    const text = bodyText(undefined, `<p>Hi</p>${"<hr>".repeat(262_144)}`)!;
    expect(text.startsWith("Hi\n\n---")).toBe(true);
    expect(text.length).toBeLessThanOrEqual(DERIVED_TEXT_MAX);
    expect(text.length).toBeGreaterThan(DERIVED_TEXT_MAX - 100);
  });
});
