import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

describe.each(databases)("workspace ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const patch = (payload: unknown, key?: string) => t.call({ method: "PATCH", url: "/v1/workspace", payload: payload as object, ...(key ? { key } : {}) });

  describe("getWorkspace", () => {
    it("returns the calling key's workspace in the sandbox environment for a sandbox key", async () => {
      const res = await t.call({ method: "GET", url: "/v1/workspace" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        id: t.workspace.id,
        object: "workspace",
        name: "Acme",
        environment: "sandbox",
        default_from: null,
        monthly_quota: null,
        content_retention_days: null,
        tracking: { opens: false, clicks: false, replies: false, unsubscribe: false },
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });
    });

    it("reports the live environment for a live key", async () => {
      const res = await t.call({ method: "GET", url: "/v1/workspace", key: t.workspace.liveKey });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: t.workspace.id, environment: "live" });
    });

    it("shows another workspace's key only its own workspace", async () => {
      const res = await t.call({ method: "GET", url: "/v1/workspace", key: t.other.sandboxKey });
      expect(res.json()).toMatchObject({ id: t.other.id, name: "Globex" });
    });
  });

  describe("updateWorkspace", () => {
    it("renames the workspace and stamps updated_at", async () => {
      const before = (await t.call({ method: "GET", url: "/v1/workspace" })).json();
      t.clock.advance(5000);
      const res = await patch({ name: "Acme Corp" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: t.workspace.id, name: "Acme Corp", environment: "sandbox", created_at: before.created_at, updated_at: new Date(t.clock.now()).toISOString() });
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).json().name).toBe("Acme Corp");
    });

    it("applies to both environments, since the workspace serves both", async () => {
      expect((await patch({ name: "Acme Corp" })).statusCode).toBe(200);
      const live = await t.call({ method: "GET", url: "/v1/workspace", key: t.workspace.liveKey });
      expect(live.json()).toMatchObject({ name: "Acme Corp", environment: "live" });
    });

    it("stores default_from normalised", async () => {
      const res = await patch({ default_from: "  Acme Support <Help@ACME.Example>  " });
      expect(res.statusCode).toBe(200);
      expect(res.json().default_from).toBe("Acme Support <Help@acme.example>");
      const quoted = await patch({ default_from: '"Acme, Inc." <hello@acme.example>' });
      expect(quoted.json().default_from).toBe('"Acme, Inc." <hello@acme.example>');
      const bare = await patch({ default_from: "hello@Acme.Example" });
      expect(bare.json().default_from).toBe("hello@acme.example");
    });

    it("refuses a default_from too long for its column once quoted (422, nothing changed)", async () => {
      // 454 characters as given, within the contract's 512; quoted, each backslash escaped, 656.
      const long = `${"\\".repeat(200)} <${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(58)}>`;
      const res = await patch({ default_from: long });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/default_from", message: expect.stringMatching(/^must be at most 512 characters as its header carries it/) }] });
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).json().default_from).toBeNull();
    });

    it("keeps fields that are left out", async () => {
      await patch({ default_from: "hello@acme.example" });
      const res = await patch({ name: "Acme Corp" });
      expect(res.json()).toMatchObject({ name: "Acme Corp", default_from: "hello@acme.example" });
    });

    it("clears default_from when it is set to null", async () => {
      await patch({ default_from: "hello@acme.example" });
      const res = await patch({ default_from: null });
      expect(res.statusCode).toBe(200);
      expect(res.json().default_from).toBeNull();
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).json().default_from).toBeNull();
    });

    it("refuses an invalid default_from with 422 and keeps the old one", async () => {
      await patch({ default_from: "hello@acme.example" });
      for (const bad of ["not an address", "hello@", "Acme <hello@acme.example>\r\nBcc: x@evil.example"]) {
        const res = await patch({ default_from: bad });
        expect(res.statusCode, bad).toBe(422);
        expect(res.headers["content-type"]).toContain("application/problem+json");
        expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "body", pointer: "/default_from" }] });
      }
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).json().default_from).toBe("hello@acme.example");
    });

    it("refuses an empty body {} with 422", async () => {
      const res = await patch({});
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", status: 422 });
    });

    it("refuses an unknown field, an empty name, one of only spaces and a name over 100 characters with 422", async () => {
      for (const body of [{ name: "Acme", plan: "pro" }, { name: "" }, { name: " \t " }, { name: "n".repeat(101) }, { name: 42 }]) {
        const res = await patch(body);
        expect(res.statusCode, JSON.stringify(body)).toBe(422);
        expect(res.json().code).toBe("validation_failed");
      }
      expect((await t.call({ method: "GET", url: "/v1/workspace" })).json().name).toBe("Acme");
    });

    it("drops the spaces around a new name", async () => {
      expect((await patch({ name: "  Acme Corp " })).json().name).toBe("Acme Corp");
    });

    it("leaves the other workspace untouched", async () => {
      await patch({ name: "Acme Corp", default_from: "hello@acme.example" });
      const other = await t.call({ method: "GET", url: "/v1/workspace", key: t.other.sandboxKey });
      expect(other.json()).toMatchObject({ name: "Globex", default_from: null });
    });
  });
});
