import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

const UNRESTRICTED = { allowed_ips: null, sender_domains: null, recipient_domains: null };

describe.each(databases)("API key restrictions ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const createKey = async (payload: Record<string, unknown>, key?: string) => {
    const res = await t.call({ method: "POST", url: "/v1/api-keys", payload, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; secret: string; restrictions: Record<string, unknown> };
  };
  const sendingKey = (restrictions: Record<string, unknown>, key?: string) => createKey({ name: "Billing", permission: "sending_access", restrictions }, key);
  const updateKey = (id: string, payload: Record<string, unknown>) => t.call({ method: "PATCH", url: `/v1/api-keys/${id}`, payload });
  const send = (key: string, payload: Record<string, unknown>, url = "/v1/messages") => t.call({ method: "POST", url, key, payload });
  const messageCount = async () => ((await t.call({ method: "GET", url: "/v1/messages?limit=100" })).json().data as unknown[]).length;

  describe("createApiKey", () => {
    it("answers a key without restrictions as all null", async () => {
      const key = await createKey({ name: "Web app" });
      expect(key.restrictions).toEqual(UNRESTRICTED);
    });

    it("keeps the restrictions given, domains in lower case and without repeats of case", async () => {
      const key = await sendingKey({ sender_domains: ["Acme.Example", "acme.example"], recipient_domains: ["team.example"], allowed_ips: ["203.0.113.0/24", "2001:db8::1"] });
      expect(key.restrictions).toEqual({ sender_domains: ["acme.example"], recipient_domains: ["team.example"], allowed_ips: ["203.0.113.0/24", "2001:db8::1"] });
      const read = await t.call({ method: "GET", url: `/v1/api-keys/${key.id}` });
      expect(read.json().restrictions).toEqual(key.restrictions);
    });

    it("refuses domain limits on a full_access key with 422, since it could lift them, and stores nothing", async () => {
      const before = (await t.call({ method: "GET", url: "/v1/api-keys" })).json().data.length;
      const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Admin", restrictions: { sender_domains: ["acme.example"], recipient_domains: ["team.example"] } } });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual(["/restrictions/sender_domains", "/restrictions/recipient_domains"]);
      expect((await t.call({ method: "GET", url: "/v1/api-keys" })).json().data.length).toBe(before);
    });

    it("takes the longest form an IPv6 range can be written in (an IPv4 tail and a /128)", async () => {
      const longest = "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255/128";
      const key = await createKey({ name: "CI", restrictions: { allowed_ips: [longest] } });
      expect(key.restrictions.allowed_ips).toEqual([longest]);
    });

    it("lets a full_access key be limited to addresses", async () => {
      const key = await createKey({ name: "CI", restrictions: { allowed_ips: ["10.0.0.0/8"] } });
      expect(key.restrictions).toEqual({ ...UNRESTRICTED, allowed_ips: ["10.0.0.0/8"] });
    });

    it("refuses what is not an address or CIDR range, pointing at each entry", async () => {
      const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "CI", restrictions: { allowed_ips: ["10.0.0.0/8", "10.0.0.0/33", "example.com", "1.2.3.4/8/1"] } } });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual(["/restrictions/allowed_ips/1", "/restrictions/allowed_ips/2", "/restrictions/allowed_ips/3"]);
    });

    it("refuses an empty list and a domain that is not a host name with 422", async () => {
      for (const restrictions of [{ sender_domains: [] }, { recipient_domains: ["not a domain"] }, { sender_domains: ["@acme.example"] }]) {
        const res = await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Billing", permission: "sending_access", restrictions } });
        expect(res.statusCode, JSON.stringify(restrictions)).toBe(422);
      }
    });
  });

  describe("updateApiKey", () => {
    it("replaces the restrictions given, keeps the others, and null lifts one", async () => {
      const key = await sendingKey({ sender_domains: ["acme.example"], allowed_ips: ["203.0.113.7"] });
      const res = await updateKey(key.id, { restrictions: { recipient_domains: ["team.example"], allowed_ips: null } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().restrictions).toEqual({ sender_domains: ["acme.example"], recipient_domains: ["team.example"], allowed_ips: null });
      expect((await t.call({ method: "GET", url: `/v1/api-keys/${key.id}` })).json().restrictions).toEqual(res.json().restrictions);
    });

    it("renames a key and leaves its restrictions and secret alone", async () => {
      const key = await sendingKey({ sender_domains: ["acme.example"] });
      const res = await updateKey(key.id, { name: "Billing (EU)" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ name: "Billing (EU)", restrictions: { sender_domains: ["acme.example"] } });
      expect(res.json()).not.toHaveProperty("secret");
      expect((await send(key.secret, { from: "billing@acme.example", to: "ada@example.com", subject: "Hi", text: "Hi" })).statusCode).toBe(202);
    });

    it("applies a change to the key's very next request", async () => {
      const key = await sendingKey({ sender_domains: ["acme.example"] });
      const message = { from: "hello@other.example", to: "ada@example.com", subject: "Hi", text: "Hi" };
      expect((await send(key.secret, message)).statusCode).toBe(403);
      expect((await updateKey(key.id, { restrictions: { sender_domains: ["acme.example", "other.example"] } })).statusCode).toBe(200);
      expect((await send(key.secret, message)).statusCode).toBe(202);
    });

    it("keeps the restrictions through a rotation: the new secret is held to them too", async () => {
      const key = await sendingKey({ sender_domains: ["acme.example"] });
      const rotated = await t.call({ method: "POST", url: `/v1/api-keys/${key.id}/rotate`, payload: { overlap_seconds: 0 } });
      expect(rotated.json().restrictions).toEqual(key.restrictions);
      const res = await send(rotated.json().secret, { from: "a@other.example", to: "ada@example.com", subject: "Hi", text: "Hi" });
      expect(res.statusCode).toBe(403);
    });

    it("refuses domain limits on a full_access key with 422", async () => {
      const key = await createKey({ name: "Admin" });
      const res = await updateKey(key.id, { restrictions: { recipient_domains: ["team.example"] } });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors[0].pointer).toBe("/restrictions/recipient_domains");
    });

    it("refuses an empty body with 422", async () => {
      const key = await createKey({ name: "Admin" });
      expect((await updateKey(key.id, {})).statusCode).toBe(422);
    });

    it("refuses to change a revoked key with 409", async () => {
      const key = await sendingKey({ sender_domains: ["acme.example"] });
      await t.call({ method: "DELETE", url: `/v1/api-keys/${key.id}` });
      const res = await updateKey(key.id, { restrictions: { sender_domains: null } });
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe("api_key_revoked");
    });

    it("answers 404 for another workspace's key and for the other environment's", async () => {
      const theirs = await createKey({ name: "Theirs" }, t.other.sandboxKey);
      const live = await createKey({ name: "Live" }, t.workspace.liveKey);
      for (const id of [theirs.id, live.id]) {
        const res = await updateKey(id, { name: "Mine now" });
        expect(res.statusCode).toBe(404);
      }
      expect((await t.call({ method: "GET", url: `/v1/api-keys/${theirs.id}`, key: t.other.sandboxKey })).json().name).toBe("Theirs");
    });

    it("refuses a sending_access key with 403", async () => {
      const key = await sendingKey({});
      const res = await t.call({ method: "PATCH", url: `/v1/api-keys/${key.id}`, key: key.secret, payload: { restrictions: { sender_domains: null } } });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("insufficient_permission");
    });
  });

  describe("allowed_ips", () => {
    it("admits a caller inside the list, IPv4 ranges matching IPv4-mapped IPv6 sockets too", async () => {
      const key = await createKey({ name: "CI", restrictions: { allowed_ips: ["203.0.113.0/24", "2001:db8::/32"] } });
      for (const remoteAddress of ["203.0.113.9", "::ffff:203.0.113.200", "2001:db8::7"]) {
        const res = await t.call({ method: "GET", url: "/v1/workspace", key: key.secret, remoteAddress });
        expect(res.statusCode, remoteAddress).toBe(200);
      }
    });

    it("refuses any other caller with 403 ip_not_allowed, naming the address it saw", async () => {
      const key = await createKey({ name: "CI", restrictions: { allowed_ips: ["203.0.113.0/24"] } });
      const res = await t.call({ method: "POST", url: "/v1/messages", key: key.secret, remoteAddress: "198.51.100.4", payload: { to: "ada@example.com", subject: "Hi", text: "Hi" } });
      expect(res.statusCode).toBe(403);
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: "ip_not_allowed", status: 403 });
      expect(res.json().detail).toContain("198.51.100.4");
      expect(await messageCount()).toBe(0);
    });

    it("leaves a user's access token and other keys alone", async () => {
      await createKey({ name: "CI", restrictions: { allowed_ips: ["203.0.113.0/24"] } });
      expect((await t.call({ method: "GET", url: "/v1/workspace", remoteAddress: "198.51.100.4" })).statusCode).toBe(200);
    });
  });

  describe("allowed_ips behind a trusted proxy", () => {
    it("judges the client's address from X-Forwarded-For only when the proxy is trusted", async () => {
      await t.restart({ TRUST_PROXY: "127.0.0.1" });
      const key = await createKey({ name: "CI", restrictions: { allowed_ips: ["203.0.113.9"] } });
      const viaProxy = (forwardedFor: string, remoteAddress: string) =>
        t.call({ method: "GET", url: "/v1/workspace", key: key.secret, remoteAddress, headers: { "x-forwarded-for": forwardedFor } });
      expect((await viaProxy("203.0.113.9", "127.0.0.1")).statusCode).toBe(200);
      expect((await viaProxy("198.51.100.4", "127.0.0.1")).statusCode).toBe(403);
      // A caller that is not the trusted proxy cannot claim an allowed address.
      expect((await viaProxy("203.0.113.9", "198.51.100.4")).statusCode).toBe(403);
    });
  });

  describe("createMessage", () => {
    it("accepts mail from an allowed sender domain, whatever its case", async () => {
      const key = await sendingKey({ sender_domains: ["acme.example"] });
      const res = await send(key.secret, { from: "Acme <Billing@ACME.example>", to: "ada@example.com", subject: "Hi", text: "Hi" });
      expect(res.statusCode, res.body).toBe(202);
    });

    it("refuses another sender domain, a subdomain included, with 403 sender_not_allowed and stores nothing", async () => {
      const key = await sendingKey({ sender_domains: ["acme.example"] });
      for (const from of ["billing@other.example", "billing@eu.acme.example"]) {
        const res = await send(key.secret, { from, to: "ada@example.com", subject: "Hi", text: "Hi" });
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ code: "sender_not_allowed", errors: [{ pointer: "/from" }] });
      }
      expect(await messageCount()).toBe(0);
    });

    it("checks the workspace's default sender when the message gives no from", async () => {
      await t.call({ method: "PATCH", url: "/v1/workspace", payload: { default_from: "hello@other.example" } });
      const key = await sendingKey({ sender_domains: ["acme.example"] });
      const res = await send(key.secret, { to: "ada@example.com", subject: "Hi", text: "Hi" });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("sender_not_allowed");
    });

    it("refuses a message with any recipient outside recipient_domains, pointing at each as given, and stores nothing", async () => {
      const key = await sendingKey({ recipient_domains: ["team.example"] });
      const res = await send(key.secret, { from: "hello@acme.example", to: ["ada@team.example", "grace@example.com"], cc: ["alan@TEAM.example", "Grace <GRACE@example.com>"], bcc: "eve@elsewhere.example", subject: "Hi", text: "Hi" });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({
        code: "recipient_not_allowed",
        detail: "This API key may send only to addresses at team.example (restrictions.recipient_domains); refused: grace@example.com, eve@elsewhere.example.",
        errors: [
          { pointer: "/to/1", message: "grace@example.com is not at a domain this key may send to" },
          { pointer: "/cc/1", message: "GRACE@example.com is not at a domain this key may send to" },
          { pointer: "/bcc", message: "eve@elsewhere.example is not at a domain this key may send to" },
        ],
      });
      expect(res.json().errors).toHaveLength(3);
      expect(await messageCount()).toBe(0);
      const inside = await send(key.secret, { from: "hello@acme.example", to: "ada@team.example", cc: "alan@TEAM.example", subject: "Hi", text: "Hi" });
      expect(inside.statusCode).toBe(202);
    });

    it("answers validation problems before restrictions, so a bad request says what is wrong with it", async () => {
      const key = await sendingKey({ recipient_domains: ["team.example"] });
      const res = await send(key.secret, { to: "not an address", subject: "Hi", text: "Hi" });
      expect(res.statusCode).toBe(422);
    });

    it("holds a live key to its restrictions like a sandbox key", async () => {
      await t.verifiedDomain("acme.example");
      await t.verifiedDomain("other.example");
      const key = await sendingKey({ sender_domains: ["acme.example"] }, t.workspace.liveKey);
      expect((await send(key.secret, { from: "a@other.example", to: "ada@example.com", subject: "Hi", text: "Hi" })).statusCode).toBe(403);
      expect((await send(key.secret, { from: "a@acme.example", to: "ada@example.com", subject: "Hi", text: "Hi" })).statusCode).toBe(202);
    });
  });

  describe("createMessageBatch", () => {
    it("answers a message outside the restrictions with its own 403 and accepts the others", async () => {
      const key = await sendingKey({ sender_domains: ["acme.example"] });
      const res = await send(key.secret, { messages: [
        { from: "a@acme.example", to: "ada@example.com", subject: "Hi", text: "Hi" },
        { from: "a@other.example", to: "ada@example.com", subject: "Hi", text: "Hi" },
      ] }, "/v1/messages/batch");
      expect(res.statusCode, res.body).toBe(200);
      const [first, second] = res.json().data;
      expect(first.status).toBe(202);
      expect(second).toMatchObject({ status: 403, message: null, error: { code: "sender_not_allowed", status: 403 } });
      expect(await messageCount()).toBe(1);
    });
  });

  describe("previewMessage", () => {
    it("fails exactly where the send would", async () => {
      const key = await sendingKey({ recipient_domains: ["team.example"] });
      const res = await send(key.secret, { from: "a@acme.example", to: "ada@example.com", subject: "Hi", text: "Hi" }, "/v1/messages/preview");
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("recipient_not_allowed");
    });
  });
});
