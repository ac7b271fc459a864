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
});
