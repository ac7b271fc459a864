import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

type Preview = {
  object: string;
  environment: string;
  from: string;
  to: string[];
  subject: string;
  template: { slug: string; version: number } | null;
  html: string | null;
  text: string | null;
  tracking: Record<string, boolean>;
  scheduled_at: string | null;
  recipients: Array<{ email: string; type: string; suppression: { id: string; reason: string; created_at: string } | null; simulated_outcome: string | null }>;
  mime: string;
  size_bytes: number;
};

describe.each(databases)("message previews ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const preview = (body: unknown, key?: string) => t.call({ method: "POST", url: "/v1/messages/preview", payload: body as Record<string, unknown>, ...(key ? { key } : {}) });

  const previewOk = async (body: unknown, key?: string) => {
    const res = await preview(body, key);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Preview>();
  };

  const count = async (table: string) => Number(((await t.runtime.db.knex(table).count({ n: "*" }).first()) as { n: number | string }).n);

  /** A preview is a dry run: no message, recipient, event, job, webhook delivery or usage. */
  const expectNothingStored = async () => {
    for (const table of ["messages", "message_recipients", "events", "jobs", "webhook_deliveries"]) expect(await count(table), table).toBe(0);
  };

  const suppress = async (email: string, key?: string) => {
    const res = await t.call({ method: "POST", url: "/v1/suppressions", payload: { email }, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string; created_at: string }>();
  };

  describe("previewMessage", () => {
    it("answers what createMessage would send, rendered as the worker renders it, and stores nothing", async () => {
      const body = aMessage({ to: ["ada@example.com", "Grace <grace@example.com>"], bcc: "audit@acme.example", headers: { "X-Order": "1234" } });
      const result = await previewOk(body);
      expect(result).toMatchObject({
        object: "message_preview",
        environment: "sandbox",
        from: "Acme <hello@acme.example>",
        to: ["ada@example.com", "Grace <grace@example.com>"],
        bcc: ["audit@acme.example"],
        subject: "Welcome",
        template: null,
        html: "<p>Hello Ada</p>",
        // Derived from the HTML, as the worker derives it.
        text: "Hello Ada",
        headers: { "X-Order": "1234" },
        tracking: { opens: false, clicks: false, replies: false, unsubscribe: false },
        scheduled_at: null,
      });
      expect(result.recipients.map((r) => [r.email, r.type, r.suppression, r.simulated_outcome])).toEqual([
        ["ada@example.com", "to", null, "delivered"],
        ["grace@example.com", "to", null, "delivered"],
        ["audit@acme.example", "bcc", null, "delivered"],
      ]);
      expect(result.mime).toMatch(/^Subject: Welcome\r$/m);
      expect(result.mime).toMatch(/^X-Order: 1234\r$/m);
      expect(result.mime).toMatch(/^Message-ID: <msg_[0-9a-z]+@acme\.example>\r$/m);
      // Bcc travels in the envelope only, as in the message the worker sends.
      expect(result.mime).not.toMatch(/audit@acme\.example/);
      expect(result.size_bytes).toBe(Buffer.byteLength(result.mime));
      await expectNothingStored();
    });

    it("answers the same source when the process renders on compose threads (DELIVERY_COMPOSE_THREADS) as on its event loop", async () => {
      const body = aMessage({ attachments: [{ filename: "a.txt", content: Buffer.from("hello").toString("base64"), content_type: "text/plain" }] });
      const onLoop = await previewOk(body);
      await t.restart({ DELIVERY_COMPOSE_THREADS: "1" });
      const onThread = await previewOk(body);
      // The Message-ID (a new id per preview) and the MIME boundaries differ; the rest is the same.
      const stable = (mime: string) => mime.replace(/msg_[0-9a-z]+/g, "msg_").replace(/-{2,}_NmP-[0-9a-f-]+/g, "--boundary").replace(/boundary="[^"]+"/g, 'boundary=""');
      expect(stable(onThread.mime)).toBe(stable(onLoop.mime));
      expect(onThread.mime).toContain("aGVsbG8=");
      await expectNothingStored();
    });

    it("renders a template with its variables and names the version it would use", async () => {
      const created = await t.call({
        method: "POST",
        url: "/v1/templates",
        payload: { slug: "welcome", name: "Welcome", subject: "Welcome, {{ first_name }}", html: "<p>Hello {{ first_name }}</p>", variables: [{ name: "first_name", type: "string", required: true }], publish: true },
      });
      expect(created.statusCode, created.body).toBe(201);
      const result = await previewOk({ from: "Acme <hello@acme.example>", to: "ada@example.com", template: { slug: "welcome", variables: { first_name: "Ada" } } });
      expect(result).toMatchObject({ subject: "Welcome, Ada", html: "<p>Hello Ada</p>", text: "Hello Ada", template: { slug: "welcome", version: 1 } });
      expect(result.mime).toMatch(/^Subject: Welcome, Ada\r$/m);

      // A missing variable fails exactly as createMessage fails, pointing into the request.
      const res = await preview({ from: "Acme <hello@acme.example>", to: "ada@example.com", template: { slug: "welcome", variables: {} } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual(["/template/variables/first_name"]);
      await expectNothingStored();
    });

    it("shows which recipients the environment's suppression list would skip, and the simulator's outcome for the rest", async () => {
      const suppression = await suppress("grace@example.com");
      const result = await previewOk(aMessage({ to: ["GRACE@example.com", "bounced+1@simulator.test", "soft_bounced@simulator.test"], cc: "opened@simulator.test" }));
      expect(result.recipients.map((r) => [r.email, r.suppression, r.simulated_outcome])).toEqual([
        ["GRACE@example.com", { id: suppression.id, reason: "manual", created_at: suppression.created_at }, null],
        ["bounced+1@simulator.test", null, "bounced"],
        ["soft_bounced@simulator.test", null, "soft_bounced"],
        ["opened@simulator.test", null, "opened"],
      ]);
    });

    it("answers the same 422 as createMessage for an invalid body, and stores nothing", async () => {
      const body = aMessage({ to: "not an address", subject: "Line\r\nBcc: x@evil.example" });
      const [previewed, sent] = [await preview(body), await t.call({ method: "POST", url: "/v1/messages", payload: body })];
      expect(previewed.statusCode).toBe(422);
      expect(sent.statusCode).toBe(422);
      const pointers = (res: typeof previewed) => res.json().errors.map((e: { pointer: string }) => e.pointer).sort();
      expect(pointers(previewed)).toEqual(pointers(sent));
      expect(pointers(previewed)).toEqual(["/subject", "/to"]);
      await expectNothingStored();
    });

    it("refuses live mail from an unverified domain as createMessage does, and passes once it is verified", async () => {
      const refused = await preview(aMessage(), t.workspace.liveKey);
      expect(refused.statusCode, refused.body).toBe(422);
      expect(refused.json()).toMatchObject({ code: "sender_domain_not_verified" });

      await t.verifiedDomain("acme.example");
      const result = await previewOk(aMessage(), t.workspace.liveKey);
      expect(result.environment).toBe("live");
      // Live has no simulator.
      expect(result.recipients.map((r) => r.simulated_outcome)).toEqual([null]);
      await expectNothingStored();
    });

    it("counts nothing towards usage and answers 429 once the monthly quota is used up, as createMessage would", async () => {
      await t.verifiedDomain("acme.example");
      const quota = await t.call({ method: "PATCH", url: "/v1/workspace", payload: { monthly_quota: 1 }, key: t.workspace.liveKey });
      expect(quota.statusCode, quota.body).toBe(200);
      for (let i = 0; i < 3; i++) await previewOk(aMessage(), t.workspace.liveKey);
      const usage = await t.call({ method: "GET", url: "/v1/usage", key: t.workspace.liveKey });
      expect(usage.json().quota).toMatchObject({ used: 0, remaining: 1 });

      const sent = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage(), key: t.workspace.liveKey });
      expect(sent.statusCode, sent.body).toBe(202);
      const over = await preview(aMessage(), t.workspace.liveKey);
      expect(over.statusCode, over.body).toBe(429);
      expect(over.json()).toMatchObject({ code: "monthly_quota_exceeded" });
    });

    it("resolves the tracking and the schedule that would apply", async () => {
      const at = new Date(t.clock.now() + 3600_000).toISOString();
      const html = '<p>Hello <a href="https://acme.example/welcome">Ada</a></p>';
      const result = await previewOk(aMessage({ html, track_opens: true, track_clicks: true, scheduled_at: at }));
      expect(result.tracking).toMatchObject({ opens: true, clicks: true });
      expect(result.scheduled_at).toBe(at);
      // The source is shown before tracking rewrites it: the link is the one written, no pixel.
      expect(result.html).toBe(html);
      expect(result.mime).toContain("https://acme.example/welcome");
      await expectNothingStored();
    });

    it("reads another environment's or workspace's suppressions as none", async () => {
      await suppress("ada@example.com", t.workspace.liveKey);
      await suppress("ada@example.com", t.other.sandboxKey);
      const result = await previewOk(aMessage());
      expect(result.recipients[0]!.suppression).toBeNull();
    });
  });
});
