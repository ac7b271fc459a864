import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSpec } from "../../src/http/spec.js";
import { newId } from "../../src/domain/ids.js";
import { databases } from "../helpers/databases.js";
import { signedUp } from "../helpers/dashboard-session.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

type Json = Record<string, unknown>;

/** Every GET of the contract that takes an `after` cursor, with its path template. */
function cursorPagedLists(): { operationId: string; path: string }[] {
  const spec = loadSpec() as unknown as { paths: Record<string, Json>; components: { parameters: Record<string, Json> } };
  const resolve = (p: Json): Json => (typeof p.$ref === "string" ? spec.components.parameters[p.$ref.split("/").pop()!]! : p);
  return Object.entries(spec.paths).flatMap(([path, item]) => {
    const get = item.get as { operationId: string; parameters?: Json[] } | undefined;
    const pagesByCursor = get?.parameters?.some((p) => resolve(p).name === "after" && resolve(p).in === "query");
    return get && pagesByCursor ? [{ operationId: get.operationId, path }] : [];
  });
}

/** Every GET of the contract that filters by a created_after .. created_before window. */
function createdWindowLists(): { operationId: string; path: string }[] {
  const spec = loadSpec() as unknown as { paths: Record<string, Json>; components: { parameters: Record<string, Json> } };
  const resolve = (p: Json): Json => (typeof p.$ref === "string" ? spec.components.parameters[p.$ref.split("/").pop()!]! : p);
  return Object.entries(spec.paths).flatMap(([path, item]) => {
    const get = item.get as { operationId: string; parameters?: Json[] } | undefined;
    const names = (get?.parameters ?? []).map((p) => resolve(p).name);
    return get && names.includes("created_after") && names.includes("created_before") ? [{ operationId: get.operationId, path }] : [];
  });
}

/** A URL for the path template: its parameters filled with values of the right shape (validation comes before any lookup). */
function urlOf(path: string, after: string): string {
  const filled = path.replace("{message_id}", newId("message")).replace("{template}", "welcome").replace("{webhook_id}", newId("webhookEndpoint"));
  return `${filled}?after=${encodeURIComponent(after)}`;
}

describe.each(databases)("Lists ($name)", (database) => {
  let t: TestApp;
  let ownerToken: string;
  beforeEach(async () => {
    t = await createTestApp(database);
    // An owner's token: members and invitations are listed for a person, not an API key.
    const owner = await signedUp(t, { email: "ada@acme.example", workspace_name: "Acme" });
    ownerToken = await owner.session.token(owner.workspaceId);
  });
  afterEach(async () => t.close());

  const lists = cursorPagedLists();

  it("finds every cursor-paged list of the contract", () => {
    // A guard on the table below: a new list is covered as soon as the contract declares it.
    expect(lists.length).toBeGreaterThanOrEqual(15);
  });

  // A cursor of the wrong kind used to be compared as a string against the list's ids, and
  // answered a page from an arbitrary place (`zzz` sorts after every id: the whole list again).
  it.each(["zzz", "msg_01jd3k8m2q5v7w9x1y3z5a7b9c'--", "evt_01jd3k8m2q5v7w9x1y3z5a7b9c", "-1"])("refuses the cursor %j where it is not one of the list's own", async (cursor) => {
    for (const { operationId, path } of lists) {
      if (operationId === "listEvents" && cursor.startsWith("evt_") && !cursor.includes("'")) continue;
      const res = await t.call({ method: "GET", url: urlOf(path, cursor), key: ownerToken });
      expect(res.statusCode, `${operationId} after=${cursor}: ${res.body}`).toBe(422);
      expect(res.json(), operationId).toMatchObject({ code: "validation_failed", errors: [{ location: "query", pointer: "/after" }] });
    }
  });

  const windows = createdWindowLists();

  it("finds every list filtered by a created window", () => {
    expect(windows.map((list) => list.operationId).sort()).toEqual(["listAuditEvents", "listEvents", "listMessages", "listRequestLogs"]);
  });

  // An inverted window used to answer an empty page, as if nothing had happened in it; usage and
  // metrics already refused theirs.
  it.each([
    ["2026-11-22T00:00:00Z", "2026-11-21T00:00:00Z"],
    ["2026-11-21T00:00:00Z", "2026-11-21T00:00:00Z"],
  ])("refuses created_after %s with created_before %s: the window is empty", async (after, before) => {
    for (const { operationId, path } of windows) {
      const res = await t.call({ method: "GET", url: `${path}?created_after=${after}&created_before=${before}`, key: ownerToken });
      expect(res.statusCode, `${operationId}: ${res.body}`).toBe(422);
      expect(res.json().errors, operationId).toEqual([{ location: "query", pointer: "/created_after", message: "must be before created_before (created_after is inclusive, created_before exclusive)" }]);
    }
  });
});
