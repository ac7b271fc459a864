import { describe, expect, it } from "vitest";
import { numberOrNull } from "../../dashboard/src/lib/forms.js";
import { formatDays } from "../../dashboard/src/lib/format.js";
import { changeShortensRetention, shortensRetention } from "../../dashboard/src/lib/retention.js";

/**
 * Content retention in the dashboard's helpers: the settings form's numbers, where empty means
 * null (dashboard/src/lib/forms.ts), and the days the removed-content notice names
 * (dashboard/src/lib/format.ts). The notice itself is checked in the browser
 * (test/e2e/retention.test.ts).
 */
describe("numberOrNull", () => {
  it("reads an empty number field as null: no quota, content kept for good", () => {
    expect(numberOrNull("")).toBeNull();
  });

  it("reads a number field's value as that number", () => {
    expect(numberOrNull("30")).toBe(30);
    expect(numberOrNull("3650")).toBe(3650);
  });
});

describe("formatDays", () => {
  it("counts days in words, one day singular", () => {
    expect(formatDays(1)).toBe("1 day");
    expect(formatDays(30)).toBe("30 days");
  });
});

describe("shortensRetention", () => {
  it("is true when saving would remove content sooner: turning retention on, or lowering it", () => {
    expect(shortensRetention(null, 30)).toBe(true);
    expect(shortensRetention(30, 7)).toBe(true);
  });

  it("is false when nothing would go sooner: the same, longer, or kept for good", () => {
    expect(shortensRetention(30, 30)).toBe(false);
    expect(shortensRetention(7, 30)).toBe(false);
    expect(shortensRetention(30, null)).toBe(false);
    expect(shortensRetention(null, null)).toBe(false);
  });
});

describe("changeShortensRetention", () => {
  it("asks only when the retention is among the changed fields and shortens what was loaded", () => {
    expect(changeShortensRetention(30, { content_retention_days: 7 })).toBe(true);
    expect(changeShortensRetention(null, { name: "Acme", content_retention_days: 30 })).toBe(true);
    expect(changeShortensRetention(7, { content_retention_days: 30 })).toBe(false);
  });

  it("is false when the retention is not changed: a form left as loaded sends no retention, so a longer one set meanwhile stays", () => {
    expect(changeShortensRetention(7, { name: "Acme" })).toBe(false);
    expect(changeShortensRetention(null, {})).toBe(false);
  });
});
