import { describe, expect, it } from "vitest";
import { changedFields, typedText } from "../../dashboard/src/lib/changes.js";

/**
 * What a settings form sends (dashboard/src/lib/changes.ts): only the fields its user changed
 * against what it loaded, so a save never puts back a value someone else set meanwhile (the
 * workspace form, a domain's tracking settings).
 */
describe("changedFields", () => {
  const loaded = {
    name: "Acme",
    default_from: null as string | null,
    monthly_quota: 1000 as number | null,
    content_retention_days: 7 as number | null,
    tracking: { opens: false, clicks: false, replies: true, unsubscribe: false },
  };

  it("leaves out every field the form still shows as loaded", () => {
    expect(changedFields(loaded, { ...loaded, tracking: { ...loaded.tracking } })).toEqual({});
  });

  it("keeps only the changed fields, and only the changed keys of a nested object", () => {
    const next = { ...loaded, name: "Acme Inc", monthly_quota: null, tracking: { ...loaded.tracking, clicks: true } };
    expect(changedFields(loaded, next)).toEqual({ name: "Acme Inc", monthly_quota: null, tracking: { clicks: true } });
  });

  it("compares lists by their items, in any order, as the update operations' sets are", () => {
    const endpoint = { event_types: ["message.delivered", "message.bounced"] as string[] | null };
    expect(changedFields(endpoint, { event_types: ["message.bounced", "message.delivered"] })).toEqual({});
    expect(changedFields(endpoint, { event_types: ["message.bounced"] })).toEqual({ event_types: ["message.bounced"] });
    expect(changedFields(endpoint, { event_types: ["message.bounced", "message.opened"] })).toEqual({ event_types: ["message.bounced", "message.opened"] });
    expect(changedFields(endpoint, { event_types: null })).toEqual({ event_types: null });
  });

  it("tells null from a value and from an empty text", () => {
    expect(changedFields({ a: null as string | null, b: "" as string | null }, { a: "", b: null })).toEqual({ a: "", b: null });
  });
});

describe("typedText", () => {
  it("is the loaded value while the field still shows it, spaces and all", () => {
    expect(typedText(" Acme ", " Acme ")).toBe(" Acme ");
    expect(typedText("", null)).toBeNull();
  });

  it("is the text trimmed once edited, and null when emptied", () => {
    expect(typedText(" Acme Inc ", "Acme")).toBe("Acme Inc");
    expect(typedText("  ", "Acme")).toBeNull();
  });
});
