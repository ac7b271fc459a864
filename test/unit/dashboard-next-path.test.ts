import { describe, expect, it } from "vitest";
import { nextPath, signInPath } from "../../dashboard/src/auth/next-path.js";

/**
 * Where the sign-in page goes afterwards (dashboard/src/auth/next-path.ts): only a path on the
 * dashboard's own origin, so that a link to the sign-in page cannot send a member elsewhere once
 * signed in (an open redirect).
 */
const origin = "https://mail.acme.example";
const after = (next: string) => nextPath(`?next=${encodeURIComponent(next)}`, origin);

describe("nextPath", () => {
  it("goes back to the path, query and fragment the visitor was headed for", () => {
    expect(after("/messages?status=bounced&from=2026-11-01")).toBe("/messages?status=bounced&from=2026-11-01");
    expect(after("/invitations/abc#accept")).toBe("/invitations/abc#accept");
    expect(nextPath(signInPath("/settings?tab=members").slice("/sign-in".length), origin)).toBe("/settings?tab=members");
  });

  it("goes to the overview without a next, or with an empty one", () => {
    expect(nextPath("", origin)).toBe("/");
    expect(nextPath("?next=", origin)).toBe("/");
  });

  it("refuses another origin however it is written", () => {
    for (const next of [
      "//evil.example",
      "/\\evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      // The URL parser drops tabs and newlines anywhere, so these read as //evil.example.
      "/\t/evil.example",
      "/\n/evil.example",
      "/\r\n/evil.example",
      "\t//evil.example",
      "/\t\\evil.example",
    ]) {
      expect(after(next), JSON.stringify(next)).toBe("/");
    }
  });

  it("refuses the bypass as the browser's address bar sends it", () => {
    expect(nextPath("?next=%2F%09%2Fevil.example", origin)).toBe("/");
    expect(nextPath("?next=%2F%0a%2Fevil.example", origin)).toBe("/");
    expect(nextPath("?next=%2F%0d%0a%2Fevil.example", origin)).toBe("/");
  });

  it("gives a path that stays on the origin when followed", () => {
    for (const next of ["/\t/evil.example", "/messages", "evil.example", "/a/../..//evil.example", "/%2F%2Fevil.example"]) {
      expect(new URL(after(next), origin).origin, JSON.stringify(next)).toBe(origin);
    }
  });
});
