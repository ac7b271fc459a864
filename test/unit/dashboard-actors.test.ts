import { describe, expect, it } from "vitest";
import { describeActor } from "../../dashboard/src/lib/actors.js";

/** How the dashboard names who did something (dashboard/src/lib/actors.ts): the audit log's actors, API keys' creators. */
describe("describeActor", () => {
  const emails = new Map([["usr_ada", "ada@acme.example"]]);
  const keyNames = new Map([["key_ci", "CI"]]);

  it("names a member by address and a key by name where the page knows them, else by id", () => {
    expect(describeActor({ type: "user", id: "usr_ada" }, emails, keyNames)).toEqual({ kind: "Member", name: "ada@acme.example" });
    expect(describeActor({ type: "user", id: "usr_gone" }, emails, keyNames)).toEqual({ kind: "Member", name: "usr_gone" });
    expect(describeActor({ type: "api_key", id: "key_ci" }, emails, keyNames)).toEqual({ kind: "API key", name: "CI" });
    expect(describeActor({ type: "api_key", id: "key_elsewhere" }, emails)).toEqual({ kind: "API key", name: "key_elsewhere" });
  });
});
