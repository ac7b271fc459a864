import { createPrivateKey, createPublicKey } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { databases } from "../helpers/databases.js";
import { startDnsServer, type DnsServer } from "../helpers/dns-server.js";
import { ContractChecker } from "../helpers/contract.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { migrationSource } from "../../src/db/migrations/index.js";
import { newId } from "../../src/domain/ids.js";
import { LIMITS } from "../../src/domain/limits.js";
import { runMaintenance, type MaintenanceLog } from "../../src/maintenance.js";
import type { components } from "../../generated/v1.js";

const HOSTNAME = "mail.mailroom.test";
const HOUR = 3_600_000;

type Domain = components["schemas"]["Domain"];
type DomainRecord = components["schemas"]["DomainRecord"];

describe.each(databases)("Domains ($name)", (database) => {
  let t: TestApp;
  let dns: DnsServer;
  beforeEach(async () => {
    dns = await startDnsServer();
    t = await createTestApp(database, { DNS_SERVERS: dns.address, SENDING_HOSTNAME: HOSTNAME });
  });
  afterEach(async () => {
    await t.close();
    await dns.close();
  });

  const addDomain = async (payload: Record<string, unknown> = { name: "acme.example" }, key?: string) => {
    const res = await t.call({ method: "POST", url: "/v1/domains", payload, ...(key ? { key } : {}) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as Domain;
  };
  const verify = async (id: string) => {
    const res = await t.call({ method: "POST", url: `/v1/domains/${id}/verify` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Domain;
  };
  const names = async (key?: string) => {
    const res = await t.call({ method: "GET", url: "/v1/domains?limit=100", ...(key ? { key } : {}) });
    expect(res.statusCode).toBe(200);
    return (res.json().data as Domain[]).map((d) => d.name);
  };
  const record = (domain: Domain, purpose: DomainRecord["purpose"], nth = 0) => domain.records.filter((r) => r.purpose === purpose)[nth]!;
  const statuses = (domain: Domain) => domain.records.map((r) => `${r.purpose}:${r.status}`);
  /** Live mail from the domain: 202 while it may send, 422 sender_domain_not_verified when not. */
  const sendLive = () => t.call({ method: "POST", url: "/v1/messages", key: t.workspace.liveKey, payload: { from: "hello@acme.example", to: "ada@example.net", subject: "Hi", html: "<p>Hi</p>" } });
  /** Publishes a record as the API asked for it. */
  const publish = (r: DomainRecord) => dns.add(r.name, r.type === "MX" ? { type: "MX", priority: r.priority!, exchange: `${r.value}.` } : { type: "TXT", value: r.value });
  const setTrackingDomain = async (id: string, tracking_domain = "track.acme.example") => {
    const res = await t.call({ method: "PATCH", url: `/v1/domains/${id}`, payload: { tracking_domain } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Domain;
  };
  /**
   * Runs `meanwhile` (another request, to its end) when the service next calls the repository's
   * `write`, before that write: the other request lands between this one's read and its write,
   * every time rather than by luck.
   */
  const beforeNextWrite = (write: "updateSettings" | "saveCheck" | "replaceKeys", meanwhile: () => Promise<unknown>) => {
    const repository = t.runtime.repositories.domains;
    const original = repository[write].bind(repository) as (...args: unknown[]) => Promise<boolean>;
    vi.spyOn(repository, write).mockImplementationOnce(async (...args: unknown[]) => {
      await meanwhile();
      return original(...args);
    });
  };

  describe("createDomain", () => {
    it("answers 201 with a Location, two DKIM keys and every record to publish, all pending", async () => {
      const res = await t.call({ method: "POST", url: "/v1/domains", payload: { name: "Acme.Example" } });
      expect(res.statusCode).toBe(201);
      const domain = res.json() as Domain;
      expect(res.headers.location).toBe(`/v1/domains/${domain.id}`);
      expect(domain).toMatchObject({
        id: expect.stringMatching(/^dom_[0-9a-z]{26}$/),
        object: "domain",
        name: "acme.example",
        status: "pending",
        return_path_domain: "bounces.acme.example",
        created_at: new Date(t.clock.now()).toISOString(),
        verified_at: null,
        last_checked_at: null,
      });
      const yymm = new Date(t.clock.now()).toISOString().slice(2, 7).replace("-", "");
      const [rsa, ed] = domain.dkim;
      expect(rsa).toEqual({ selector: expect.stringMatching(new RegExp(`^mr${yymm}[0-9a-z]{3}-rsa$`)), algorithm: "rsa-sha256" });
      expect(ed).toEqual({ selector: rsa!.selector.replace(/-rsa$/, "-ed"), algorithm: "ed25519-sha256" });
      expect(domain.records).toEqual([
        { purpose: "return_path", type: "MX", name: "bounces.acme.example", value: HOSTNAME, priority: 10, required: true, status: "pending", found: [] },
        { purpose: "spf", type: "TXT", name: "bounces.acme.example", value: `v=spf1 a:${HOSTNAME} ~all`, priority: null, required: true, status: "pending", found: [] },
        { purpose: "dkim", type: "TXT", name: `${rsa!.selector}._domainkey.acme.example`, value: expect.stringMatching(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]{300,}$/), priority: null, required: true, status: "pending", found: [] },
        { purpose: "dkim", type: "TXT", name: `${ed!.selector}._domainkey.acme.example`, value: expect.stringMatching(/^v=DKIM1; k=ed25519; p=[A-Za-z0-9+/]{43}=$/), priority: null, required: true, status: "pending", found: [] },
        { purpose: "dmarc", type: "TXT", name: "_dmarc.acme.example", value: "v=DMARC1; p=none;", priority: null, required: false, status: "pending", found: [] },
      ]);
    });

    it("keeps the private keys sealed at rest, and hands the pipeline keys that match the published ones", async () => {
      const domain = await addDomain();
      const row = await t.runtime.db.knex("domains").where({ id: domain.id }).first();
      expect(row.dkim_keys).not.toContain("PRIVATE KEY");

      const identity = await t.runtime.services.domains.sendingIdentity(t.workspace.id, "ACME.example.");
      expect(identity).toMatchObject({ domainId: domain.id, name: "acme.example", sendsLive: false, returnPathDomain: "bounces.acme.example" });
      expect(identity!.signers.map((s) => [s.domain, s.selector, s.algorithm])).toEqual(domain.dkim.map((k) => ["acme.example", k.selector, k.algorithm]));
      for (const [i, signer] of identity!.signers.entries()) {
        const publicKey = createPublicKey(createPrivateKey(signer.privateKeyPem));
        const p = signer.algorithm === "rsa-sha256" ? publicKey.export({ type: "spki", format: "der" }).toString("base64") : Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url").toString("base64");
        expect(record(domain, "dkim", i).value).toContain(`p=${p}`);
      }
      expect(await t.runtime.services.domains.sendingIdentity(t.workspace.id, "other.example")).toBeNull();
      expect(await t.runtime.services.domains.sendingIdentity(t.other.id, "acme.example")).toBeNull();
    });

    it("puts the return path under the subdomain asked for", async () => {
      const domain = await addDomain({ name: "acme.example", return_path_subdomain: "Mail-Bounces" });
      expect(domain.return_path_domain).toBe("mail-bounces.acme.example");
      expect(record(domain, "return_path").name).toBe("mail-bounces.acme.example");
      expect(record(domain, "spf").name).toBe("mail-bounces.acme.example");
    });

    it("stores an internationalised name in its ASCII form", async () => {
      const domain = await addDomain({ name: "Bücher.Example" });
      expect(domain.name).toBe("xn--bcher-kva.example");
      expect(record(domain, "dmarc").name).toBe("_dmarc.xn--bcher-kva.example");
      const again = await t.call({ method: "POST", url: "/v1/domains", payload: { name: "xn--bcher-kva.example" } });
      expect(again.statusCode).toBe(409);
    });

    it("answers 409 domain_exists for a name the workspace has, whatever its case or trailing dot; another workspace may add it", async () => {
      await addDomain();
      for (const name of ["acme.example", "ACME.example", "acme.example."]) {
        const res = await t.call({ method: "POST", url: "/v1/domains", payload: { name } });
        expect(res.statusCode).toBe(409);
        expect(res.headers["content-type"]).toContain("application/problem+json");
        expect(res.json()).toMatchObject({ code: "domain_exists", status: 409 });
      }
      // The live key sees the same workspace's domains.
      expect((await t.call({ method: "POST", url: "/v1/domains", payload: { name: "acme.example" }, key: t.workspace.liveKey })).statusCode).toBe(409);
      await addDomain({ name: "acme.example" }, t.other.sandboxKey);
      expect(await names()).toEqual(["acme.example"]);
    });

    it("answers 409 to the second of two concurrent adds of the same name", async () => {
      const answers = await Promise.all([1, 2].map(() => t.call({ method: "POST", url: "/v1/domains", payload: { name: "acme.example" } })));
      expect(answers.map((res) => res.statusCode).sort()).toEqual([201, 409]);
      expect(answers.find((res) => res.statusCode === 409)!.json().code).toBe("domain_exists");
      expect(await names()).toEqual(["acme.example"]);
    });

    it.each([
      ["localhost"],
      ["acme"],
      ["-acme.example"],
      ["acme-.example"],
      ["acme..example"],
      ["acme.example/path"],
      ["https://acme.example"],
      ["hello@acme.example"],
      ["acme.example:25"],
      ["acme example.com"],
      ["a_b.example"],
      ["10.0.0.1"],
      [`${"a".repeat(64)}.example`],
      [`${"abcdefghi.".repeat(23)}example`],
    ])("refuses %j with 422 and stores nothing", async (name) => {
      const res = await t.call({ method: "POST", url: "/v1/domains", payload: { name } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "body", pointer: "/name" }] });
      expect(await names()).toEqual([]);
    });

    it(`refuses a domain past the workspace's ${LIMITS.domainsPerWorkspace.toLocaleString("en")} with 409 domain_limit_reached, storing nothing`, async () => {
      const first = await addDomain({ name: "d0.example" });
      // The rest are copies of the first row: making that many key pairs would take minutes.
      const { knex } = t.runtime.db;
      const row = await knex("domains").where({ id: first.id }).first();
      const copies = Array.from({ length: LIMITS.domainsPerWorkspace - 1 }, (_, i) => ({ ...row, id: newId("domain", t.clock.now() + i + 1), name: `d${i + 1}.example` }));
      for (let i = 0; i < copies.length; i += 100) await knex("domains").insert(copies.slice(i, i + 100));
      const inserts = vi.spyOn(t.runtime.repositories.domains, "insert");

      const res = await t.call({ method: "POST", url: "/v1/domains", payload: { name: "one-more.example" } });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: "domain_limit_reached", status: 409, detail: expect.stringContaining(`${LIMITS.domainsPerWorkspace}`) });
      expect(inserts).not.toHaveBeenCalled();
      // Another workspace has its own; deleting one makes room.
      await addDomain({ name: "one-more.example" }, t.other.sandboxKey);
      expect((await t.call({ method: "DELETE", url: `/v1/domains/${first.id}` })).statusCode).toBe(200);
      await addDomain({ name: "one-more.example" });
    });

    it("refuses a bad return_path_subdomain and unknown fields with 422", async () => {
      let res = await t.call({ method: "POST", url: "/v1/domains", payload: { name: "acme.example", return_path_subdomain: "a.b" } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ errors: [{ pointer: "/return_path_subdomain" }] });
      res = await t.call({ method: "POST", url: "/v1/domains", payload: { name: "acme.example", dkim: "rsa" } });
      expect(res.statusCode).toBe(422);
      expect(await names()).toEqual([]);
    });

    it.each([["xn--zz"], ["XN--A"], ["xn--"]])("refuses a return_path_subdomain %j that is not a valid label once normalised (bad punycode) with 422, storing nothing", async (return_path_subdomain) => {
      const res = await t.call({ method: "POST", url: "/v1/domains", payload: { name: "acme.example", return_path_subdomain } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ location: "body", pointer: "/return_path_subdomain" }] });
      expect(await names()).toEqual([]);
    });

    it("takes an internationalised return_path_subdomain in its ASCII form", async () => {
      const domain = await addDomain({ name: "acme.example", return_path_subdomain: "XN--bcher-kva" });
      expect(domain.return_path_domain).toBe("xn--bcher-kva.acme.example");
    });
  });

  describe("listDomains", () => {
    it("pages through the workspace's domains, newest first, the same for both environments", async () => {
      for (const name of ["one.example", "two.example", "three.example"]) {
        await addDomain({ name });
        t.clock.advance(1000);
      }
      await addDomain({ name: "globex.example" }, t.other.sandboxKey);
      expect(await names()).toEqual(["three.example", "two.example", "one.example"]);
      expect(await names(t.workspace.liveKey)).toEqual(["three.example", "two.example", "one.example"]);

      const first = (await t.call({ method: "GET", url: "/v1/domains?limit=2" })).json();
      expect(first).toMatchObject({ has_more: true });
      expect(first.data.map((d: Domain) => d.name)).toEqual(["three.example", "two.example"]);
      const second = (await t.call({ method: "GET", url: `/v1/domains?limit=2&after=${first.next_cursor}` })).json();
      expect(second).toMatchObject({ has_more: false, next_cursor: null });
      expect(second.data.map((d: Domain) => d.name)).toEqual(["one.example"]);
    });
  });

  describe("listDomains with a status filter", () => {
    it("lists only the domains in that status", async () => {
      const pending = await addDomain({ name: "pending.example" });
      const verified = await addDomain({ name: "verified.example" });
      for (const r of verified.records) publish(r);
      await verify(verified.id);
      const ids = async (status: string) => {
        const res = await t.call({ method: "GET", url: `/v1/domains?status=${status}` });
        expect(res.statusCode, res.body).toBe(200);
        return (res.json().data as Domain[]).map((d) => d.id);
      };
      expect(await ids("verified")).toEqual([verified.id]);
      expect(await ids("pending")).toEqual([pending.id]);
      expect(await ids("failed")).toEqual([]);
      expect((await t.call({ method: "GET", url: "/v1/domains?status=verified", key: t.other.sandboxKey })).json().data).toEqual([]);
    });

    it("refuses an unknown status with 422", async () => {
      const res = await t.call({ method: "GET", url: "/v1/domains?status=broken" });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: expect.stringContaining("status") }] });
    });
  });

  describe("getDomain", () => {
    it("answers the domain as created", async () => {
      const domain = await addDomain();
      const res = await t.call({ method: "GET", url: `/v1/domains/${domain.id}`, key: t.workspace.liveKey });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(domain);
    });

    it("answers 404 for an unknown id", async () => {
      const res = await t.call({ method: "GET", url: "/v1/domains/dom_01jd3k8m2q5v7w9x1y3z5a7b9c" });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe("not_found");
    });
  });

  describe("deleteDomain", () => {
    it("removes the domain and its keys", async () => {
      const domain = await addDomain();
      expect(await t.runtime.services.domains.sendingIdentity(t.workspace.id, "acme.example")).not.toBeNull();
      const res = await t.call({ method: "DELETE", url: `/v1/domains/${domain.id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ id: domain.id, object: "domain", deleted: true });
      expect((await t.call({ method: "GET", url: `/v1/domains/${domain.id}` })).statusCode).toBe(404);
      expect((await t.call({ method: "DELETE", url: `/v1/domains/${domain.id}` })).statusCode).toBe(404);
      expect(await t.runtime.services.domains.sendingIdentity(t.workspace.id, "acme.example")).toBeNull();
      // It can be added again, with new keys.
      const again = await addDomain();
      expect(record(again, "dkim").value).not.toBe(record(domain, "dkim").value);
    });
  });

  describe("verifyDomain", () => {
    it("verifies the records one by one as they are published", async () => {
      const domain = await addDomain();
      t.clock.advance(60_000);
      let checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:missing", "spf:missing", "dkim:missing", "dkim:missing", "dmarc:missing"]);
      expect(checked).toMatchObject({ status: "pending", verified_at: null, last_checked_at: new Date(t.clock.now()).toISOString() });

      publish(record(domain, "return_path"));
      checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:verified", "spf:missing", "dkim:missing", "dkim:missing", "dmarc:missing"]);
      expect(record(checked, "return_path").found).toEqual([`10 ${HOSTNAME}`]);

      publish(record(domain, "spf"));
      publish(record(domain, "dkim", 0));
      checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:verified", "spf:verified", "dkim:verified", "dkim:missing", "dmarc:missing"]);
      expect(record(checked, "spf").found).toEqual([`v=spf1 a:${HOSTNAME} ~all`]);
      // The RSA record is longer than one 255-byte string: what was found is the joined value.
      expect(record(checked, "dkim").found).toEqual([record(domain, "dkim").value]);
      expect(checked.status).toBe("pending");
      expect(await t.runtime.services.domains.sendingIdentity(t.workspace.id, "acme.example")).toMatchObject({ sendsLive: false });

      publish(record(domain, "dkim", 1));
      t.clock.advance(60_000);
      checked = await verify(domain.id);
      // DMARC is recommended, not required.
      expect(statuses(checked)).toEqual(["return_path:verified", "spf:verified", "dkim:verified", "dkim:verified", "dmarc:missing"]);
      expect(checked).toMatchObject({ status: "verified", verified_at: new Date(t.clock.now()).toISOString(), last_checked_at: new Date(t.clock.now()).toISOString() });
      expect(await t.runtime.services.domains.sendingIdentity(t.workspace.id, "acme.example")).toMatchObject({ sendsLive: true });

      publish(record(domain, "dmarc"));
      checked = await verify(domain.id);
      expect(record(checked, "dmarc")).toMatchObject({ status: "verified", found: ["v=DMARC1; p=none;"] });
      // What verify answered is what get answers.
      expect((await t.call({ method: "GET", url: `/v1/domains/${domain.id}` })).json()).toEqual(checked);
    });

    it("reports a mismatch with what was found", async () => {
      const domain = await addDomain();
      dns.add("bounces.acme.example", { type: "MX", priority: 5, exchange: "mx.elsewhere.example." });
      dns.add("bounces.acme.example", { type: "TXT", value: "v=spf1 include:_spf.elsewhere.example ~all" });
      dns.add(record(domain, "dkim", 0).name, { type: "TXT", value: record(domain, "dkim", 1).value.replace("k=ed25519", "k=rsa") });
      dns.add(record(domain, "dkim", 1).name, { type: "TXT", value: "v=DKIM1; k=ed25519; p=" });
      dns.add("_dmarc.acme.example", { type: "TXT", value: "google-site-verification=abc" });
      const checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:mismatch", "spf:mismatch", "dkim:mismatch", "dkim:mismatch", "dmarc:mismatch"]);
      expect(record(checked, "return_path").found).toEqual(["5 mx.elsewhere.example"]);
      expect(record(checked, "spf").found).toEqual(["v=spf1 include:_spf.elsewhere.example ~all"]);
      expect(record(checked, "dkim", 1).found).toEqual(["v=DKIM1; k=ed25519; p="]);
      expect(record(checked, "dmarc").found).toEqual(["google-site-verification=abc"]);
      expect(checked.status).toBe("pending");
    });

    it("accepts an MX among others, any capitalisation; a DKIM key wrapped with spaces; any DMARC policy", async () => {
      const domain = await addDomain();
      dns.add("bounces.acme.example", { type: "MX", priority: 20, exchange: "backup.elsewhere.example." });
      dns.add("bounces.acme.example", { type: "MX", priority: 10, exchange: HOSTNAME.toUpperCase() });
      dns.add("bounces.acme.example", { type: "TXT", value: `v=spf1 +a:${HOSTNAME.toUpperCase()} -all` });
      dns.add("bounces.acme.example", { type: "TXT", value: "some-other-verification=1" });
      const rsa = record(domain, "dkim", 0).value;
      const p = rsa.slice(rsa.indexOf("p=") + 2);
      dns.add(record(domain, "dkim", 0).name, { type: "TXT", value: `v=DKIM1;k=rsa;  p=${p.slice(0, 100)} ${p.slice(100, 250)}\t${p.slice(250)}` });
      publish(record(domain, "dkim", 1));
      dns.add("_dmarc.acme.example", { type: "TXT", value: "v=DMARC1; p=reject; rua=mailto:dmarc@acme.example" });
      const checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:verified", "spf:verified", "dkim:verified", "dkim:verified", "dmarc:verified"]);
      expect(checked.status).toBe("verified");
    });

    it("reports a mismatch when another mail server is preferred over this host at the return-path domain (RFC 5321 §5.1)", async () => {
      const domain = await addDomain();
      publish(record(domain, "return_path"));
      dns.add("bounces.acme.example", { type: "MX", priority: 5, exchange: "mx.elsewhere.example." });
      let checked = await verify(domain.id);
      expect(record(checked, "return_path")).toMatchObject({ status: "mismatch", found: ["5 mx.elsewhere.example", `10 ${HOSTNAME}`] });

      // At the same preference, senders pick either: bounces would still go astray half the time.
      dns.remove("bounces.acme.example");
      publish(record(domain, "return_path"));
      dns.add("bounces.acme.example", { type: "MX", priority: 10, exchange: "mx.elsewhere.example." });
      checked = await verify(domain.id);
      expect(record(checked, "return_path").status).toBe("mismatch");
    });

    it("reports a mismatch for DKIM and DMARC records that receivers would discard, though they carry the right key or a DMARC version", async () => {
      const domain = await addDomain();
      const ed = record(domain, "dkim", 1);
      dns.add(record(domain, "dkim", 0).name, { type: "TXT", value: `${record(domain, "dkim", 0).value}; h=sha1` });
      dns.add(ed.name, { type: "TXT", value: ed.value.replace("k=ed25519", "k=rsa") });
      dns.add("_dmarc.acme.example", { type: "TXT", value: "v=DMARC1; rua=mailto:dmarc@acme.example" });
      const checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:missing", "spf:missing", "dkim:mismatch", "dkim:mismatch", "dmarc:mismatch"]);
    });

    it("takes the organisational domain's DMARC record for a subdomain that has none of its own, and counts two records at one name as none (RFC 7489 §6.6.3)", async () => {
      const domain = await addDomain({ name: "mail.acme.example" });
      expect(record(domain, "dmarc").name).toBe("_dmarc.mail.acme.example");
      dns.add("_dmarc.acme.example", { type: "TXT", value: "v=DMARC1; p=reject" });
      expect(record(await verify(domain.id), "dmarc")).toMatchObject({ status: "verified", found: ["v=DMARC1; p=reject"] });

      dns.add("_dmarc.mail.acme.example", { type: "TXT", value: "v=DMARC1; p=none" });
      dns.add("_dmarc.mail.acme.example", { type: "TXT", value: "v=DMARC1; p=quarantine" });
      expect(record(await verify(domain.id), "dmarc")).toMatchObject({ status: "mismatch", found: ["v=DMARC1; p=none", "v=DMARC1; p=quarantine"] });
    });

    it("does not verify two SPF records at the return-path domain (RFC 7208 §4.5)", async () => {
      const domain = await addDomain();
      publish(record(domain, "spf"));
      dns.add("bounces.acme.example", { type: "TXT", value: "v=spf1 -all" });
      expect(record(await verify(domain.id), "spf").status).toBe("mismatch");
    });

    it("takes a verified domain whose required record disappeared into temporary_failure, still sending live mail, keeping when it was last verified", async () => {
      const domain = await addDomain();
      for (const r of domain.records) publish(r);
      const verified = await verify(domain.id);
      expect(verified).toMatchObject({ status: "verified", failing_since: null, next_check_at: new Date(t.clock.now() + 6 * HOUR).toISOString() });
      expect(await t.runtime.services.domains.sendingIdentity(t.workspace.id, "acme.example")).toMatchObject({ sendsLive: true });

      dns.remove(record(domain, "dkim", 1).name);
      t.clock.advance(HOUR);
      const checked = await verify(domain.id);
      const now = new Date(t.clock.now()).toISOString();
      expect(checked).toMatchObject({ status: "temporary_failure", verified_at: verified.verified_at, last_checked_at: now, failing_since: now, next_check_at: new Date(t.clock.now() + HOUR).toISOString() });
      expect(record(checked, "dkim", 1)).toMatchObject({ status: "missing", found: [] });
      expect(await t.runtime.services.domains.sendingIdentity(t.workspace.id, "acme.example")).toMatchObject({ sendsLive: true });
      expect((await sendLive()).statusCode).toBe(202);
    });

    it("leaves a domain that was never verified pending when a record disappears", async () => {
      const domain = await addDomain();
      publish(record(domain, "return_path"));
      expect(statuses(await verify(domain.id))[0]).toBe("return_path:verified");
      dns.remove("bounces.acme.example");
      expect(await verify(domain.id)).toMatchObject({ status: "pending", failing_since: null, next_check_at: null });
    });

    it("keeps a record's last status through a temporary DNS failure (SERVFAIL): a verified domain stays verified", async () => {
      const domain = await addDomain();
      for (const r of domain.records) publish(r);
      const verified = await verify(domain.id);
      expect(verified.status).toBe("verified");

      dns.fail(record(domain, "dkim", 0).name, "SERVFAIL");
      dns.fail("_dmarc.acme.example", "SERVFAIL");
      dns.remove(record(domain, "dkim", 1).name); // a real change is still seen
      t.clock.advance(60_000);
      let checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:verified", "spf:verified", "dkim:verified", "dkim:missing", "dmarc:verified"]);
      expect(checked.status).toBe("temporary_failure");

      publish(record(domain, "dkim", 1));
      t.clock.advance(60_000);
      checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:verified", "spf:verified", "dkim:verified", "dkim:verified", "dmarc:verified"]);
      // Verified, but not freshly: one required record could not be looked up.
      expect(checked).toMatchObject({ status: "verified", verified_at: verified.verified_at, last_checked_at: new Date(t.clock.now()).toISOString(), failing_since: null });
      expect(record(checked, "dkim", 0).found).toEqual([record(domain, "dkim", 0).value]);
    });

    it("does not verify a record it could not look up", async () => {
      const domain = await addDomain();
      for (const r of domain.records) publish(r);
      dns.fail("bounces.acme.example", "SERVFAIL");
      const checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:pending", "spf:pending", "dkim:verified", "dkim:verified", "dmarc:verified"]);
      expect(checked.status).toBe("pending");
    });

    it("does not verify a pending domain through records kept from an earlier check", async () => {
      const domain = await addDomain();
      publish(record(domain, "return_path"));
      publish(record(domain, "spf"));
      publish(record(domain, "dkim", 0));
      expect((await verify(domain.id)).status).toBe("pending");
      // The last record arrives while the return path's lookups fail: its records were verified
      // before, but this check did not see them.
      publish(record(domain, "dkim", 1));
      dns.fail("bounces.acme.example", "SERVFAIL");
      t.clock.advance(60_000);
      const checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:verified", "spf:verified", "dkim:verified", "dkim:verified", "dmarc:missing"]);
      expect(checked).toMatchObject({ status: "pending", verified_at: null });
      expect((await sendLive()).statusCode).toBe(422);

      dns.remove("bounces.acme.example");
      publish(record(domain, "return_path"));
      publish(record(domain, "spf"));
      t.clock.advance(60_000);
      expect(await verify(domain.id)).toMatchObject({ status: "verified", verified_at: new Date(t.clock.now()).toISOString() });
    });

    it("checks the records against the host name they show after SENDING_HOSTNAME changes", async () => {
      const domain = await addDomain();
      for (const r of domain.records) publish(r);
      expect((await verify(domain.id)).status).toBe("verified");

      await t.restart({ SENDING_HOSTNAME: "mta2.mailroom.test" });
      t.clock.advance(60_000);
      const moved = await verify(domain.id);
      // The records show the new host to publish, and are checked against it.
      expect(record(moved, "return_path")).toMatchObject({ value: "mta2.mailroom.test", status: "mismatch", found: [`10 ${HOSTNAME}`] });
      expect(record(moved, "spf")).toMatchObject({ value: "v=spf1 a:mta2.mailroom.test ~all", status: "mismatch", found: [`v=spf1 a:${HOSTNAME} ~all`] });
      expect(moved.status).toBe("temporary_failure");
      expect((await t.call({ method: "GET", url: `/v1/domains/${domain.id}` })).json()).toEqual(moved);

      dns.remove("bounces.acme.example");
      publish(record(moved, "return_path"));
      publish(record(moved, "spf"));
      t.clock.advance(60_000);
      const checked = await verify(domain.id);
      expect(statuses(checked)).toEqual(["return_path:verified", "spf:verified", "dkim:verified", "dkim:verified", "dmarc:verified"]);
      expect(checked).toMatchObject({ status: "verified", failing_since: null });
    });

    it("answers 503 and changes nothing when DNS does not answer at all", async () => {
      const domain = await addDomain();
      for (const r of domain.records) dns.fail(r.name, "SERVFAIL");
      const res = await t.call({ method: "POST", url: `/v1/domains/${domain.id}/verify` });
      expect(res.statusCode).toBe(503);
      expect(res.headers["retry-after"]).toBeDefined();
      expect(res.json()).toMatchObject({ code: "service_unavailable" });
      expect((await t.call({ method: "GET", url: `/v1/domains/${domain.id}` })).json()).toEqual(domain);
    });

    it("checks and updates domains added before the upgrade that versions them (migration 022)", async () => {
      const domain = await addDomain();
      const { knex } = t.runtime.db;
      await knex.migrate.down({ migrationSource, name: "022-domain-versions" });
      expect(await knex.schema.hasColumn("domains", "version")).toBe(false);
      await knex.migrate.latest({ migrationSource });
      for (const r of domain.records) publish(r);
      expect((await verify(domain.id)).status).toBe("verified");
      expect(record(await setTrackingDomain(domain.id), "tracking").name).toBe("track.acme.example");
    });

    it("keeps the tracking record of a tracking domain set while the check was looking records up", async () => {
      const domain = await addDomain();
      for (const r of domain.records) publish(r);
      beforeNextWrite("saveCheck", () => setTrackingDomain(domain.id));
      const checked = await verify(domain.id);
      expect(checked).toMatchObject({ status: "verified", tracking_domain: "track.acme.example" });
      expect(record(checked, "tracking")).toMatchObject({ name: "track.acme.example", status: "missing" });
      expect((await t.call({ method: "GET", url: `/v1/domains/${domain.id}` })).json()).toEqual(checked);
    });
  });

  describe("automatic checks (recheckDue, run by the worker's maintenance)", () => {
    const recheck = () => t.runtime.services.domains.recheckDue();
    const get = async (id: string) => (await t.call({ method: "GET", url: `/v1/domains/${id}` })).json() as Domain;
    const iso = (ms: number) => new Date(ms).toISOString();
    const verifiedDomain = async (name = "acme.example") => {
      const domain = await addDomain({ name });
      for (const r of domain.records) publish(r);
      expect((await verify(domain.id)).status).toBe("verified");
      return domain;
    };

    it("looks a verified domain up again every 6 hours, and not before", async () => {
      const domain = await verifiedDomain();
      t.clock.advance(6 * HOUR - 1);
      expect(await recheck()).toEqual([]);
      t.clock.advance(1);
      expect(await recheck()).toEqual([{ workspaceId: t.workspace.id, domainId: domain.id, name: "acme.example", from: "verified", to: "verified", missing: [] }]);
      expect(await get(domain.id)).toMatchObject({ status: "verified", last_checked_at: iso(t.clock.now()), verified_at: iso(t.clock.now()), next_check_at: iso(t.clock.now() + 6 * HOUR) });
      expect(await recheck()).toEqual([]);
    });

    it("keeps sending through the 72-hour grace period when a required record disappears, checking hourly, then fails the domain and refuses its live mail", async () => {
      const domain = await verifiedDomain();
      const rsa = record(domain, "dkim", 0);
      dns.remove(rsa.name);
      t.clock.advance(6 * HOUR);
      const since = t.clock.now();
      expect(await recheck()).toEqual([{ workspaceId: t.workspace.id, domainId: domain.id, name: "acme.example", from: "verified", to: "temporary_failure", missing: [rsa.name] }]);
      expect(await get(domain.id)).toMatchObject({ status: "temporary_failure", failing_since: iso(since), grace_ends_at: iso(since + 72 * HOUR), next_check_at: iso(since + HOUR) });
      expect(record(await get(domain.id), "dkim", 0)).toMatchObject({ status: "missing" });
      expect((await sendLive()).statusCode).toBe(202);
      const metrics = (await t.call({ method: "GET", url: "/metrics", key: null })).body;
      expect(metrics).toContain('mailroom_domains{status="temporary_failure"} 1');
      expect(metrics).toContain('mailroom_domains{status="failed"} 0');

      t.clock.advance(HOUR);
      expect((await recheck()).map((o) => o.to)).toEqual(["temporary_failure"]);
      expect(await get(domain.id)).toMatchObject({ failing_since: iso(since), next_check_at: iso(t.clock.now() + HOUR) });

      // The list shows the same state as get.
      expect((await t.call({ method: "GET", url: "/v1/domains" })).json().data).toEqual([await get(domain.id)]);
      t.clock.set(since + 72 * HOUR - 1);
      expect((await recheck()).map((o) => o.to)).toEqual(["temporary_failure"]);
      expect((await sendLive()).statusCode).toBe(202);
      t.clock.set(since + 73 * HOUR);
      expect(await recheck()).toEqual([{ workspaceId: t.workspace.id, domainId: domain.id, name: "acme.example", from: "temporary_failure", to: "failed", missing: [rsa.name] }]);
      expect(await get(domain.id)).toMatchObject({ status: "failed", failing_since: iso(since), grace_ends_at: iso(since + 72 * HOUR), next_check_at: null });
      const refused = await sendLive();
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toMatchObject({ code: "sender_domain_not_verified" });
      expect((await t.call({ method: "GET", url: "/metrics", key: null })).body).toContain('mailroom_domains{status="failed"} 1');

      // A failed domain waits for verifyDomain; publishing the record again and verifying restores it.
      publish(rsa);
      t.clock.advance(24 * HOUR);
      expect(await recheck()).toEqual([]);
      expect(await verify(domain.id)).toMatchObject({ status: "verified", failing_since: null, grace_ends_at: null, verified_at: iso(t.clock.now()), next_check_at: iso(t.clock.now() + 6 * HOUR) });
      expect((await sendLive()).statusCode).toBe(202);
    });

    it("refuses live mail after grace_ends_at even when DNS never answers", async () => {
      const domain = await verifiedDomain();
      const rsa = record(domain, "dkim", 0);
      dns.remove(rsa.name);
      t.clock.advance(6 * HOUR);
      const since = t.clock.now();
      expect((await recheck()).map((o) => o.to)).toEqual(["temporary_failure"]);
      // From now on no lookup is answered: no check concludes anything about the records.
      for (const r of domain.records) dns.fail(r.name, "SERVFAIL");
      t.clock.set(since + 72 * HOUR - 1);
      expect((await recheck()).map((o) => o.to)).toEqual(["temporary_failure"]);
      expect((await sendLive()).statusCode).toBe(202);
      const waiting = await sendLive(); // accepted in the grace period, delivered after it

      t.clock.set(since + 72 * HOUR);
      const refused = await sendLive();
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toMatchObject({ code: "sender_domain_not_verified" });
      await t.drain();
      const message = (await t.call({ method: "GET", url: `/v1/messages/${waiting.json().id}`, key: t.workspace.liveKey })).json();
      expect(message.status).toBe("failed");

      t.clock.set(since + 73 * HOUR);
      expect(await recheck()).toEqual([{ workspaceId: t.workspace.id, domainId: domain.id, name: "acme.example", from: "temporary_failure", to: "failed", missing: [rsa.name] }]);
      expect(await get(domain.id)).toMatchObject({ status: "failed", failing_since: iso(since), next_check_at: null });
    });

    it("keeps last_checked_at at the last check that got an answer when an unanswered check fails the domain past its grace period", async () => {
      for (const how of ["recheckDue", "verifyDomain"] as const) {
        const domain = await verifiedDomain(`${how.toLowerCase()}.example`);
        dns.remove(record(domain, "dkim", 0).name);
        t.clock.advance(6 * HOUR);
        const answeredAt = t.clock.now();
        expect(await recheck()).toMatchObject([{ to: "temporary_failure" }]);
        for (const r of domain.records) dns.fail(r.name, "SERVFAIL");
        t.clock.advance(73 * HOUR);
        if (how === "recheckDue") expect(await recheck()).toMatchObject([{ to: "failed" }]);
        else expect(await verify(domain.id)).toMatchObject({ status: "failed" });
        expect(await get(domain.id)).toMatchObject({ status: "failed", last_checked_at: iso(answeredAt) });
        await t.call({ method: "DELETE", url: `/v1/domains/${domain.id}` });
      }
    });

    it("takes a domain back to verified when its records return within the grace period", async () => {
      const domain = await verifiedDomain();
      const spf = record(domain, "spf");
      dns.remove(spf.name); // the return path's MX goes too: two required records missing, one name
      t.clock.advance(6 * HOUR);
      expect((await recheck())[0]).toMatchObject({ to: "temporary_failure", missing: [spf.name] });
      publish(record(domain, "return_path"));
      publish(spf);
      t.clock.advance(HOUR);
      expect((await recheck())[0]).toMatchObject({ from: "temporary_failure", to: "verified", missing: [] });
      expect(await get(domain.id)).toMatchObject({ status: "verified", failing_since: null, next_check_at: iso(t.clock.now() + 6 * HOUR) });
    });

    it("leaves the domain as it was when DNS does not answer at all, and tries again within the hour", async () => {
      const domain = await verifiedDomain();
      const before = await get(domain.id);
      for (const r of domain.records) dns.fail(r.name, "SERVFAIL");
      t.clock.advance(6 * HOUR);
      expect(await recheck()).toEqual([{ workspaceId: t.workspace.id, domainId: domain.id, name: "acme.example", from: "verified", to: "verified", missing: null }]);
      expect(await get(domain.id)).toEqual({ ...before, next_check_at: iso(t.clock.now() + HOUR) });
      expect(await recheck()).toEqual([]);
    });

    it("checks each due domain once when rounds run at the same time (as on several workers)", async () => {
      const names = ["a.example", "b.example", "c.example"];
      for (const name of names) await verifiedDomain(name);
      t.clock.advance(6 * HOUR);
      const [first, second] = await Promise.all([recheck(), recheck()]);
      expect([...first!, ...second!].map((o) => o.name).sort()).toEqual(names);
    });

    it("gives domains verified before the upgrade that added automatic checks their first check at once", async () => {
      const domain = await verifiedDomain();
      const checkedAt = t.clock.now();
      const { knex } = t.runtime.db;
      await knex.migrate.down({ migrationSource, name: "009-domain-checks" });
      expect(await knex.schema.hasColumn("domains", "next_check_at")).toBe(false);
      await knex.migrate.latest({ migrationSource });
      expect(await get(domain.id)).toMatchObject({ status: "verified", failing_since: null, next_check_at: iso(checkedAt) });
      t.clock.advance(1);
      expect((await recheck()).map((o) => o.domainId)).toEqual([domain.id]);
    });

    it("never checks a pending domain by itself", async () => {
      const domain = await addDomain();
      for (const r of domain.records) publish(r);
      t.clock.advance(30 * 24 * HOUR);
      expect(await recheck()).toEqual([]);
      expect(await get(domain.id)).toMatchObject({ status: "pending", last_checked_at: null, next_check_at: null });
    });

    it("is the worker's maintenance round, which logs a domain that went missing", async () => {
      const domain = await verifiedDomain();
      dns.remove(record(domain, "dkim", 1).name);
      t.clock.advance(6 * HOUR);
      const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
      const log = Object.fromEntries((["info", "warn", "error"] as const).map((level) => [level, (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg })])) as unknown as MaintenanceLog;
      await runMaintenance(t.runtime, log);
      expect(lines).toEqual([{ level: "warn", fields: expect.objectContaining({ domain: "acme.example", from: "verified", to: "temporary_failure", missing: [record(domain, "dkim", 1).name] }), msg: expect.stringContaining("grace period") }]);
      expect((await get(domain.id)).status).toBe("temporary_failure");
    });
  });

  describe("automatic check settings", () => {
    it("shows next_check_at null for every domain once DOMAIN_RECHECK_MINUTES=0, also those verified while checks were on", async () => {
      const domain = await addDomain();
      for (const r of domain.records) publish(r);
      expect((await verify(domain.id)).next_check_at).not.toBeNull();
      await t.restart({ DOMAIN_RECHECK_MINUTES: "0" });
      expect((await t.call({ method: "GET", url: `/v1/domains/${domain.id}` })).json()).toMatchObject({ status: "verified", next_check_at: null });
      expect((await t.call({ method: "GET", url: "/v1/domains" })).json().data).toMatchObject([{ id: domain.id, next_check_at: null }]);
    });

    it("DOMAIN_RECHECK_MINUTES=0 turns automatic checks off; DOMAIN_GRACE_HOURS=0 fails a domain at the first check that misses a record", async () => {
      await t.close();
      t = await createTestApp(database, { DNS_SERVERS: dns.address, SENDING_HOSTNAME: HOSTNAME, DOMAIN_RECHECK_MINUTES: "0", DOMAIN_GRACE_HOURS: "0" });
      const domain = await addDomain();
      for (const r of domain.records) publish(r);
      expect(await verify(domain.id)).toMatchObject({ status: "verified", next_check_at: null });
      dns.remove(record(domain, "dkim", 0).name);
      t.clock.advance(30 * 24 * HOUR);
      expect(await t.runtime.services.domains.recheckDue()).toEqual([]);
      const now = new Date(t.clock.now()).toISOString();
      expect(await verify(domain.id)).toMatchObject({ status: "failed", failing_since: now, grace_ends_at: now, next_check_at: null });
    });
  });

  describe("domain events (webhooks)", () => {
    const contract = new ContractChecker();
    let receiver: WebhookReceiver;
    beforeEach(async () => {
      receiver = await startWebhookReceiver();
    });
    afterEach(async () => receiver.close());

    /** An endpoint at the receiver; `key` picks the workspace and environment (sandbox by default). */
    const subscribe = async (event_types: string[] | null, key?: string, url = receiver.url) => {
      const res = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url, event_types }, ...(key ? { key } : {}) });
      expect(res.statusCode, res.body).toBe(201);
      receiver.secrets.push(res.json().secret);
      return res.json().id as string;
    };
    /** What the receiver got (every body verified by standardwebhooks), each checked against the contract. */
    const deliveries = async (): Promise<ReceivedWebhook[]> => {
      await t.drainWebhooks();
      for (const got of receiver.received) expect(contract.checkWebhook(got.payload.type, got.body), got.body).toEqual([]);
      return receiver.received;
    };
    const types = async () => (await deliveries()).map((got) => got.payload.type);
    const verifiedDomain = async () => {
      const domain = await addDomain();
      for (const r of domain.records) publish(r);
      expect((await verify(domain.id)).status).toBe("verified");
      return domain;
    };

    it("announces each status a check moves the domain into, to the workspace's endpoints of both environments", async () => {
      const sandboxEndpoint = await subscribe(null);
      const liveEndpoint = await subscribe(["domain.verified", "domain.temporary_failure", "domain.failed"], t.workspace.liveKey);
      const domain = await verifiedDomain();
      const byEnvironment = (await deliveries()).sort((a, b) => String(b.payload.environment).localeCompare(String(a.payload.environment)));
      expect(byEnvironment).toHaveLength(2);
      const [sandbox, live] = byEnvironment;
      expect(sandbox!.payload).toMatchObject({ type: "domain.verified", environment: "sandbox", domain_id: domain.id, from_status: "pending", to_status: "verified", data: { missing_records: [] } });
      expect(sandbox!.payload.domain).toEqual((await t.call({ method: "GET", url: `/v1/domains/${domain.id}` })).json());
      // One event, two endpoints: the same id (the webhook-id), each with its own environment.
      expect(live!.payload).toEqual({ ...sandbox!.payload, environment: "live" });
      expect([sandbox!.id, live!.id]).toEqual([sandbox!.payload.id, sandbox!.payload.id]);
      expect(sandbox!.payload.id).toMatch(/^evt_/);
      const endpoints = [sandboxEndpoint, liveEndpoint];
      for (const [i, endpoint] of endpoints.entries()) {
        const attempts = await t.call({ method: "GET", url: `/v1/webhooks/${endpoint}/attempts`, key: i === 0 ? t.workspace.sandboxKey : t.workspace.liveKey });
        expect(attempts.json().data).toMatchObject([{ event_id: sandbox!.payload.id, status: "succeeded" }]);
      }

      const rsa = record(domain, "dkim", 0);
      dns.remove(rsa.name);
      t.clock.advance(6 * HOUR);
      const failingSince = t.clock.now();
      await t.runtime.services.domains.recheckDue();
      t.clock.advance(HOUR);
      await t.runtime.services.domains.recheckDue(); // still failing: no event
      t.clock.set(failingSince + 73 * HOUR);
      await t.runtime.services.domains.recheckDue();
      publish(rsa);
      await verify(domain.id);
      await verify(domain.id); // verified again: no event
      const received = (await deliveries()).filter((got) => got.payload.environment === "live");
      expect(received.map((got) => [got.payload.type, got.payload.from_status, got.payload.data])).toEqual([
        ["domain.verified", "pending", { missing_records: [] }],
        ["domain.temporary_failure", "verified", { missing_records: [rsa.name] }],
        ["domain.failed", "temporary_failure", { missing_records: [rsa.name] }],
        ["domain.verified", "failed", { missing_records: [] }],
      ]);
      expect(received[1]!.payload.domain).toMatchObject({ status: "temporary_failure", failing_since: new Date(failingSince).toISOString(), grace_ends_at: new Date(failingSince + 72 * HOUR).toISOString() });
      expect(received[2]!.payload).toMatchObject({ created_at: new Date(failingSince + 73 * HOUR).toISOString(), domain: { status: "failed" } });
      expect(receiver.unverified).toEqual([]);
    });

    it("names a host that lost one of its two records once; the event's domain says which record failed", async () => {
      const domain = await verifiedDomain();
      await subscribe(["domain.temporary_failure"], t.workspace.liveKey);
      const returnPath = record(domain, "return_path");
      const spf = record(domain, "spf");
      expect(spf.name).toBe(returnPath.name);
      dns.set(returnPath.name, []);
      publish(returnPath); // the MX again, without the SPF TXT
      t.clock.advance(6 * HOUR);
      await t.runtime.services.domains.recheckDue();
      const [event] = await deliveries();
      expect(event!.payload.data).toEqual({ missing_records: [returnPath.name] });
      const records = (event!.payload.domain as Domain).records.filter((r) => r.name === returnPath.name);
      expect(records.map((r) => [r.purpose, r.type, r.status])).toEqual([["return_path", "MX", "verified"], ["spf", "TXT", "missing"]]);
    });

    it("announces the end of a DKIM rotation once, with the selectors that sign now and those retired", async () => {
      const domain = await verifiedDomain();
      await subscribe(null);
      await subscribe(["domain.dkim_rotated"], t.workspace.liveKey);
      const rotated = await t.call({ method: "POST", url: `/v1/domains/${domain.id}/rotate-dkim` });
      expect(rotated.statusCode, rotated.body).toBe(200);
      const rotating = rotated.json() as Domain;
      const next = rotating.records.filter((r) => r.purpose === "dkim_next");
      publish(next[0]!);
      await verify(domain.id); // half the new records: the rotation waits, nothing to announce
      expect((await deliveries()).filter((got) => got.payload.type === "domain.dkim_rotated")).toEqual([]);

      publish(next[1]!);
      t.clock.advance(6 * HOUR);
      await t.runtime.services.domains.recheckDue(); // the server's own check ends it
      await verify(domain.id); // and a later one announces nothing more
      const announced = (await deliveries()).filter((got) => got.payload.type === "domain.dkim_rotated");
      expect(announced.map((got) => got.payload.environment).sort()).toEqual(["live", "sandbox"]); // once per endpoint, nothing twice
      expect(await types()).toEqual(["domain.dkim_rotated", "domain.dkim_rotated"]); // the status never changed
      const live = announced.find((got) => got.payload.environment === "live")!;
      expect(live.payload).toMatchObject({
        domain_id: domain.id,
        from_status: "verified",
        to_status: "verified",
        data: { missing_records: [], selectors: rotating.dkim_rotation!.keys.map((k) => k.selector), retired_selectors: domain.dkim.map((k) => k.selector) },
      });
      expect(live.payload.domain).toEqual((await t.call({ method: "GET", url: `/v1/domains/${domain.id}` })).json());
    });

    it("sends only to endpoints that subscribe to the type and are enabled, of this workspace", async () => {
      await subscribe(["message.delivered"]);
      await subscribe(["domain.failed"]);
      const disabled = await subscribe(["domain.verified"]);
      expect((await t.call({ method: "PATCH", url: `/v1/webhooks/${disabled}`, payload: { enabled: false } })).statusCode).toBe(200);
      await subscribe(null, t.other.liveKey);
      const wanted = await subscribe(["domain.verified"], t.workspace.liveKey);
      await verifiedDomain();
      const received = await deliveries();
      expect(received.map((got) => got.payload.type)).toEqual(["domain.verified"]);
      const attempts = await t.call({ method: "GET", url: `/v1/webhooks/${wanted}/attempts`, key: t.workspace.liveKey });
      expect(attempts.json().data).toHaveLength(1);
    });

    it("announces nothing for a check that leaves the status as it was", async () => {
      await subscribe(null);
      const domain = await addDomain();
      await verify(domain.id); // nothing published: pending stays pending
      expect(await types()).toEqual([]);
      for (const r of domain.records) publish(r);
      dns.fail(record(domain, "dkim", 0).name, "SERVFAIL"); // cannot be verified by a record it could not look up
      await verify(domain.id);
      expect(await types()).toEqual([]);
    });

    it("announces a change once when a check and another race: the later one is saved over the new status, or not at all", async () => {
      await subscribe(null);
      const domain = await verifiedDomain();
      await deliveries();
      dns.remove(record(domain, "dkim", 0).name);
      t.clock.advance(6 * HOUR);
      const repository = t.runtime.repositories.domains;
      const stale = (await repository.find(t.workspace.id, domain.id))!;
      await Promise.all([verify(domain.id), t.runtime.services.domains.recheckDue()]);
      // A check made against the domain as it was before is refused, announcement and all.
      const staleCheck = { status: "temporary_failure" as const, records: stale.records, dkim_keys: stale.dkim_keys, verified_at: 1, last_checked_at: t.clock.now(), failing_since: t.clock.now(), next_check_at: null };
      const announcement = { id: "evt_stale", type: "domain.temporary_failure" as const, createdAt: t.clock.now(), payloads: { live: "{}", sandbox: "{}" } };
      expect(await repository.saveCheck(t.workspace.id, domain.id, stale, staleCheck, [announcement])).toBe(false);
      expect(await types()).toEqual(["domain.verified", "domain.temporary_failure"]);
    });

    it("can be sent again by its id (redeliverWebhookEvent), with the same webhook-id and payload", async () => {
      const endpoint = await subscribe(["domain.verified"]);
      await verifiedDomain();
      const [first] = await deliveries();
      const res = await t.call({ method: "POST", url: `/v1/webhooks/${endpoint}/redeliver`, payload: { event_id: first!.payload.id } });
      expect(res.statusCode, res.body).toBe(202);
      const [, again] = await deliveries();
      expect(again).toMatchObject({ id: first!.id, body: first!.body });
      // Its payload travels with the deliveries: an endpoint it was never sent to does not have it.
      const other = await subscribe(["message.delivered"]);
      const elsewhere = await t.call({ method: "POST", url: `/v1/webhooks/${other}/redeliver`, payload: { event_id: first!.payload.id } });
      expect(elsewhere.statusCode).toBe(404);
    });

    it("lets an endpoint subscribe to domain events, and sends a sample of one (testWebhook)", async () => {
      const endpoint = await subscribe(["domain.failed", "message.bounced"]);
      expect((await t.call({ method: "GET", url: `/v1/webhooks/${endpoint}` })).json().event_types).toEqual(["domain.failed", "message.bounced"]);
      const res = await t.call({ method: "POST", url: `/v1/webhooks/${endpoint}/test`, payload: { type: "domain.temporary_failure" } });
      expect(res.statusCode, res.body).toBe(202);
      const [sample] = await deliveries();
      expect(sample!.payload).toMatchObject({ type: "domain.temporary_failure", environment: "sandbox", from_status: "verified", to_status: "temporary_failure", domain: { name: "example.com" }, data: { test: true, missing_records: [expect.stringContaining("._domainkey.example.com")] } });
      const unknown = await t.call({ method: "POST", url: "/v1/webhooks", payload: { url: receiver.url, event_types: ["domain.deleted"] } });
      expect(unknown.statusCode).toBe(422);
    });
  });

  describe("rotateDomainDkim", () => {
    const rotate = async (id: string) => {
      const res = await t.call({ method: "POST", url: `/v1/domains/${id}/rotate-dkim` });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as Domain;
    };
    const verifiedDomain = async () => {
      const domain = await addDomain();
      for (const r of domain.records) publish(r);
      const verified = await verify(domain.id);
      expect(verified.status).toBe("verified");
      return verified;
    };
    const nextRecords = (domain: Domain) => domain.records.filter((r) => r.purpose === "dkim_next");
    const signers = async () => (await t.runtime.services.domains.sendingIdentity(t.workspace.id, "acme.example"))!.signers.map((s) => s.selector);
    /** The public key of each signer, as its DNS record publishes it (`p=`). */
    const publishedBySigners = async () =>
      (await t.runtime.services.domains.sendingIdentity(t.workspace.id, "acme.example"))!.signers.map((signer) => {
        const publicKey = createPublicKey(createPrivateKey(signer.privateKeyPem));
        return signer.algorithm === "rsa-sha256" ? publicKey.export({ type: "spki", format: "der" }).toString("base64") : Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url").toString("base64");
      });

    it("answers 409 domain_changed with Retry-After when the domain keeps changing while the new keys are saved, and runs again when retried with the same Idempotency-Key", async () => {
      const domain = await verifiedDomain();
      const repository = t.runtime.repositories.domains;
      const replaceKeys = repository.replaceKeys.bind(repository);
      // Before each save, someone else changes the domain (its tracking domain): the save finds it changed.
      let changes = 0;
      repository.replaceKeys = async (workspaceId, id, read, next) => {
        await t.call({ method: "PATCH", url: `/v1/domains/${id}`, payload: { tracking_domain: `links${++changes}.acme.example` } });
        return replaceKeys(workspaceId, id, read, next);
      };
      const call = () => t.call({ method: "POST", url: `/v1/domains/${domain.id}/rotate-dkim`, headers: { "idempotency-key": "rotate-1" } });
      const lost = await call();
      expect(lost.statusCode, lost.body).toBe(409);
      expect(lost.json()).toMatchObject({ code: "domain_changed" });
      expect(lost.headers["retry-after"]).toBe("1");
      repository.replaceKeys = replaceKeys;
      const retried = await call();
      expect(retried.statusCode, retried.body).toBe(200);
      expect(retried.headers["idempotent-replayed"]).toBeUndefined();
      expect(retried.json().dkim_rotation).not.toBeNull();
    });

    it("makes new keys under new selectors that wait for their records, while the current keys go on signing", async () => {
      const before = await verifiedDomain();
      t.clock.advance(60_000);
      const rotating = await rotate(before.id);
      expect(rotating).toMatchObject({ status: "verified", dkim: before.dkim, verified_at: before.verified_at });
      const keys = rotating.dkim_rotation!.keys;
      expect(rotating.dkim_rotation!.started_at).toBe(new Date(t.clock.now()).toISOString());
      expect(keys.map((k) => k.algorithm)).toEqual(["rsa-sha256", "ed25519-sha256"]);
      expect(keys.map((k) => k.selector)).not.toEqual(before.dkim.map((k) => k.selector));
      expect(nextRecords(rotating)).toEqual(
        keys.map((k) => ({ purpose: "dkim_next", type: "TXT", name: `${k.selector}._domainkey.acme.example`, value: expect.stringMatching(/^v=DKIM1; k=(rsa|ed25519); p=/), priority: null, required: false, status: "pending", found: [] })),
      );
      expect(rotating.records.filter((r) => r.purpose !== "dkim_next")).toEqual(before.records);
      // The waiting keys' records come next to the current ones, in the documented order.
      expect(rotating.records.map((r) => r.purpose)).toEqual(["return_path", "spf", "dkim", "dkim", "dkim_next", "dkim_next", "dmarc"]);
      expect(await signers()).toEqual(before.dkim.map((k) => k.selector));
      expect((await t.call({ method: "GET", url: `/v1/domains/${before.id}` })).json()).toEqual(rotating);

      // Not found yet: the rotation waits, and the domain stays verified.
      const checked = await verify(before.id);
      expect(checked).toMatchObject({ status: "verified", dkim: before.dkim, dkim_rotation: rotating.dkim_rotation });
      expect(nextRecords(checked).map((r) => r.status)).toEqual(["missing", "missing"]);
    });

    it("hands signing to the new keys once a check finds every new record, and drops the old keys and records", async () => {
      const before = await verifiedDomain();
      const rotating = await rotate(before.id);
      const [rsa, ed] = nextRecords(rotating);
      publish(rsa!);
      let checked = await verify(before.id);
      expect(nextRecords(checked).map((r) => r.status)).toEqual(["verified", "missing"]);
      expect(checked.dkim).toEqual(before.dkim);

      publish(ed!);
      t.clock.advance(60_000);
      checked = await verify(before.id);
      expect(checked).toMatchObject({ status: "verified", dkim: rotating.dkim_rotation!.keys, dkim_rotation: null, verified_at: new Date(t.clock.now()).toISOString() });
      expect(checked.records.filter((r) => r.purpose === "dkim")).toEqual([rsa, ed].map((r) => ({ ...r!, purpose: "dkim", required: true, status: "verified", found: [r!.value] })));
      expect(nextRecords(checked)).toEqual([]);
      expect(checked.records.map((r) => r.purpose)).toEqual(["return_path", "spf", "dkim", "dkim", "dmarc"]);
      expect(await signers()).toEqual(rotating.dkim_rotation!.keys.map((k) => k.selector));
      expect((await publishedBySigners()).map((p, i) => [rsa, ed][i]!.value.endsWith(`p=${p}`))).toEqual([true, true]);
      const row = await t.runtime.db.knex("domains").where({ id: before.id }).first();
      expect(JSON.parse(row.dkim_keys).map((k: { selector: string }) => k.selector)).toEqual(rotating.dkim_rotation!.keys.map((k) => k.selector));

      // The old records may go now: they are no longer the domain's.
      for (const old of before.records.filter((r) => r.purpose === "dkim")) dns.remove(old.name);
      expect((await verify(before.id)).status).toBe("verified");
    });

    it("ends a rotation at the server's own check as well", async () => {
      const before = await verifiedDomain();
      const rotating = await rotate(before.id);
      for (const r of nextRecords(rotating)) publish(r);
      t.clock.advance(6 * HOUR);
      expect((await t.runtime.services.domains.recheckDue()).map((o) => o.to)).toEqual(["verified"]);
      expect((await t.call({ method: "GET", url: `/v1/domains/${before.id}` })).json()).toMatchObject({ dkim: rotating.dkim_rotation!.keys, dkim_rotation: null });
    });

    it("replaces the waiting keys when rotated again", async () => {
      const before = await verifiedDomain();
      const first = await rotate(before.id);
      const second = await rotate(before.id);
      expect(second.dkim).toEqual(before.dkim);
      expect(second.dkim_rotation!.keys.map((k) => k.selector)).not.toEqual(first.dkim_rotation!.keys.map((k) => k.selector));
      expect(nextRecords(second).map((r) => r.name)).toEqual(second.dkim_rotation!.keys.map((k) => `${k.selector}._domainkey.acme.example`));
      // The first rotation's records no longer count.
      for (const r of nextRecords(first)) publish(r);
      expect((await verify(before.id)).dkim).toEqual(before.dkim);
    });

    it("never saves a check, a rotation or settings made against the domain as it was before a rotation", async () => {
      const before = await verifiedDomain();
      const repository = t.runtime.repositories.domains;
      const stale = (await repository.find(t.workspace.id, before.id))!;
      const rotating = await rotate(before.id);
      const staleCheck = { status: "verified" as const, records: stale.records, dkim_keys: stale.dkim_keys, verified_at: 1, last_checked_at: 1, failing_since: null, next_check_at: null };
      expect(await repository.saveCheck(t.workspace.id, before.id, stale, staleCheck, [])).toBe(false);
      expect(await repository.replaceKeys(t.workspace.id, before.id, stale, { dkim_keys: stale.dkim_keys, records: stale.records })).toBe(false);
      expect(await repository.updateSettings(t.workspace.id, before.id, stale, { tracking_domain: null, records: stale.records })).toBe(false);
      expect((await t.call({ method: "GET", url: `/v1/domains/${before.id}` })).json()).toEqual(rotating);
    });

    it("keeps the waiting records when the tracking domain is set while the new keys are saved, so the rotation can end", async () => {
      const before = await verifiedDomain();
      let rotating!: Domain;
      beforeNextWrite("updateSettings", async () => (rotating = await rotate(before.id)));
      const patched = await setTrackingDomain(before.id);
      expect(patched).toMatchObject({ dkim: before.dkim, dkim_rotation: rotating.dkim_rotation, tracking_domain: "track.acme.example" });
      expect(nextRecords(patched)).toEqual(nextRecords(rotating));
      expect(record(patched, "tracking").name).toBe("track.acme.example");
      expect((await t.call({ method: "GET", url: `/v1/domains/${before.id}` })).json()).toEqual(patched);

      for (const r of nextRecords(rotating)) publish(r);
      expect(await verify(before.id)).toMatchObject({ dkim: rotating.dkim_rotation!.keys, dkim_rotation: null });
    });

    it("keeps mail signed when the tracking domain is set across the check that hands signing to the new keys", async () => {
      const before = await verifiedDomain();
      const rotating = await rotate(before.id);
      for (const r of nextRecords(rotating)) publish(r);
      const newKeys = rotating.dkim_rotation!.keys;
      beforeNextWrite("updateSettings", () => verify(before.id));
      const patched = await setTrackingDomain(before.id);
      expect(patched).toMatchObject({ dkim: newKeys, dkim_rotation: null, tracking_domain: "track.acme.example" });
      // The waiting records became the `dkim` ones; the stale read's must not come back.
      expect(patched.records.filter((r) => r.purpose === "dkim").map((r) => r.name)).toEqual(newKeys.map((k) => `${k.selector}._domainkey.acme.example`));
      expect(nextRecords(patched)).toEqual([]);
      expect((await t.call({ method: "GET", url: `/v1/domains/${before.id}` })).json()).toEqual(patched);

      // The next check has no rotation to end: the new keys go on signing.
      expect(await verify(before.id)).toMatchObject({ dkim: newKeys, dkim_rotation: null });
      expect(await signers()).toEqual(newKeys.map((k) => k.selector));
    });

    it("keeps the tracking record of a tracking domain set while the new keys were being made", async () => {
      const before = await verifiedDomain();
      beforeNextWrite("replaceKeys", () => setTrackingDomain(before.id));
      const rotating = await rotate(before.id);
      expect(rotating).toMatchObject({ tracking_domain: "track.acme.example", dkim_rotation: { keys: expect.any(Array) } });
      expect(record(rotating, "tracking").name).toBe("track.acme.example");
      expect(nextRecords(rotating)).toHaveLength(2);
      expect((await t.call({ method: "GET", url: `/v1/domains/${before.id}` })).json()).toEqual(rotating);
    });

    it("refuses a domain that is not verified with 409 domain_not_verified, changing nothing", async () => {
      const domain = await addDomain();
      const res = await t.call({ method: "POST", url: `/v1/domains/${domain.id}/rotate-dkim` });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: "domain_not_verified" });
      expect(res.json().detail).toContain("acme.example is pending");
      expect((await t.call({ method: "GET", url: `/v1/domains/${domain.id}` })).json()).toEqual(domain);
    });
  });

  describe("permissions and tenancy", () => {
    it("refuses a sending_access key with 403 on every domain operation", async () => {
      const domain = await addDomain();
      const sender = (await t.call({ method: "POST", url: "/v1/api-keys", payload: { name: "Sender", permission: "sending_access" } })).json().secret as string;
      const calls = [
        { method: "POST" as const, url: "/v1/domains", payload: { name: "new.example" } },
        { method: "GET" as const, url: "/v1/domains" },
        { method: "GET" as const, url: `/v1/domains/${domain.id}` },
        { method: "POST" as const, url: `/v1/domains/${domain.id}/verify` },
        { method: "POST" as const, url: `/v1/domains/${domain.id}/rotate-dkim` },
        { method: "DELETE" as const, url: `/v1/domains/${domain.id}` },
      ];
      for (const call of calls) {
        const res = await t.call({ ...call, key: sender });
        expect(res.statusCode, `${call.method} ${call.url}`).toBe(403);
        expect(res.json().code).toBe("insufficient_permission");
      }
      expect(await names()).toEqual(["acme.example"]);
    });

    it("answers 404 for another workspace's domain on every operation, and leaves it alone", async () => {
      const theirs = await addDomain({ name: "globex.example" }, t.other.sandboxKey);
      for (const r of theirs.records) publish(r);
      for (const key of [t.workspace.sandboxKey, t.workspace.liveKey]) {
        for (const call of [
          { method: "GET" as const, url: `/v1/domains/${theirs.id}` },
          { method: "POST" as const, url: `/v1/domains/${theirs.id}/verify` },
          { method: "POST" as const, url: `/v1/domains/${theirs.id}/rotate-dkim` },
          { method: "DELETE" as const, url: `/v1/domains/${theirs.id}` },
        ]) {
          const res = await t.call({ ...call, key });
          expect(res.statusCode, `${call.method} ${call.url}`).toBe(404);
          expect(res.json().code).toBe("not_found");
        }
      }
      expect(await names()).toEqual([]);
      const still = (await t.call({ method: "GET", url: `/v1/domains/${theirs.id}`, key: t.other.sandboxKey })).json();
      expect(still).toEqual(theirs);
    });
  });
});
