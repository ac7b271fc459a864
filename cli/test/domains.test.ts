import { describe, expect, it } from "vitest";
import type { DeletedObject, Domain } from "mailroom";
import { contractExample, page, problemBody, problemOf, runCli, stubApi } from "./helpers.js";

/*
 * `mailroom domains …` against a stand-in for the API that answers with the contract's own
 * examples: what each command sends, and what it prints in JSON and on a terminal.
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const DOMAIN_ID = "dom_01jd3k8m2q5v7w9x1y3z5a7b9c";
const pending = contractExample<Domain>("PendingDomain");
const verified = contractExample<Domain>("VerifiedDomain");
const failing = contractExample<Domain>("FailingDomain");
const rotating = contractExample<Domain>("RotatingDomain");
const deleted = contractExample<DeletedObject>("DeletedDomain");

describe("mailroom domains create", () => {
  it("adds the domain named --name, with an Idempotency-Key, and prints it as the API sent it", async () => {
    const api = stubApi(201, pending);

    const result = await runCli(["domains", "create", "--name", "acme.example"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Domain>()).toEqual(pending);
    expect(api.seen).toMatchObject([{ method: "POST", target: "/v1/domains", body: { name: "acme.example" }, idempotencyKey: expect.any(String) }]);
  });

  it("sends --return-path-subdomain and --idempotency-key when given", async () => {
    const api = stubApi(201, pending);

    await runCli(["domains", "create", "--name", "acme.example", "--return-path-subdomain", "mail", "--idempotency-key", "add-acme"], { env, fetch: api.fetch });

    expect(api.seen).toMatchObject([{ body: { name: "acme.example", return_path_subdomain: "mail" }, idempotencyKey: "add-acme" }]);
  });

  it("prints the DNS records to publish as a table on a terminal, whole, and the command to verify", async () => {
    const result = await runCli(["domains", "create", "--name", "acme.example"], { env, tty: true, fetch: stubApi(201, pending).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^status\s+pending$/m);
    expect(result.stdout).toMatch(/^TYPE\s+NAME\s+PRIORITY\s+STATUS\s+VALUE$/m);
    expect(result.stdout).toMatch(/^MX\s+bounces\.acme\.example\s+10\s+pending\s+mail\.mailroom\.example$/m);
    expect(result.stdout).toMatch(/^TXT\s+bounces\.acme\.example\s+pending\s+v=spf1 a:mail\.mailroom\.example ~all$/m);
    expect(result.stdout).toMatch(/^TXT\s+_dmarc\.acme\.example\s+pending \(optional\)\s+v=DMARC1; p=none;$/m);
    for (const record of pending.records) expect(result.stdout).toContain(record.value);
    expect(result.stdout).not.toContain("Publish these records");
    expect(result.stderr).toBe(`Publish these records, then run: mailroom domains verify ${DOMAIN_ID}\n`);
  });

  it("exits 2 without --name, sending nothing", async () => {
    const api = stubApi(201, pending);

    const result = await runCli(["domains", "create"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringContaining("Give the domain with --name.") });
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with the API's 409 domain_exists for a domain the workspace already has", async () => {
    const api = stubApi(409, problemBody(409, "domain_exists"));

    const result = await runCli(["domains", "create", "--name", "acme.example"], { env, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(problemOf(result)).toMatchObject({ status: 409, code: "domain_exists" });
  });
});

describe("mailroom domains list", () => {
  it("prints one page as the API sent it, passing --limit and --after", async () => {
    const api = stubApi(200, page([verified], "cur_2"));

    const result = await runCli(["domains", "list", "--limit", "1", "--after", "cur_1"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(page([verified], "cur_2"));
    expect(api.seen.map((seen) => `${seen.method} ${seen.target}`)).toEqual(["GET /v1/domains?limit=1&after=cur_1"]);
  });

  it("passes --status, to list only the domains in that status", async () => {
    const api = stubApi(200, page([failing]));

    const result = await runCli(["domains", "list", "--status", "temporary_failure"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(page([failing]));
    expect(api.seen.map((seen) => `${seen.method} ${seen.target}`)).toEqual(["GET /v1/domains?limit=20&status=temporary_failure"]);
  });

  it("exits 2 for a --status domains do not have, sending nothing", async () => {
    const api = stubApi(200, page([]));

    const result = await runCli(["domains", "list", "--status", "missing"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toContain("Invalid values");
    expect(api.seen).toEqual([]);
  });

  it("prints every domain of every page with --all", async () => {
    const api = stubApi((request) => ({ status: 200, body: new URL(request.url).searchParams.get("after") === "cur_2" ? page([{ ...pending, id: "dom_2" }]) : page([verified], "cur_2") }));

    const result = await runCli(["domains", "list", "--all"], { env, fetch: api.fetch });

    expect(result.json<{ data: Domain[] }>().data.map((domain) => domain.id)).toEqual([DOMAIN_ID, "dom_2"]);
  });

  it("prints name, status and id as a table on a terminal", async () => {
    const result = await runCli(["domains", "list"], { env, tty: true, fetch: stubApi(200, page([verified, { ...pending, id: "dom_2", name: "news.acme.example" }])).fetch });

    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+STATUS\s+ID$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/))).toEqual([
      ["acme.example", "verified", DOMAIN_ID],
      ["news.acme.example", "pending", "dom_2"],
    ]);
  });
});

describe("mailroom domains get", () => {
  it("prints the domain as the API sent it", async () => {
    const api = stubApi(200, verified);

    const result = await runCli(["domains", "get", DOMAIN_ID], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Domain>()).toEqual(verified);
    expect(api.seen).toMatchObject([{ method: "GET", target: `/v1/domains/${DOMAIN_ID}`, idempotencyKey: null }]);
  });

  it("shows each record's status on a terminal, and what DNS has instead of a mismatched one", async () => {
    const [returnPath, spf, ...rest] = verified.records;
    const mismatched: Domain = { ...verified, status: "pending", records: [returnPath!, { ...spf!, status: "mismatch", found: ["v=spf1 -all"] }, ...rest] };

    const result = await runCli(["domains", "get", DOMAIN_ID], { env, tty: true, fetch: stubApi(200, mismatched).fetch });

    expect(result.stdout).toMatch(/^MX\s+bounces\.acme\.example\s+10\s+verified\s+mail\.mailroom\.example$/m);
    expect(result.stdout).toMatch(/^TXT\s+bounces\.acme\.example\s+mismatch\s+v=spf1 a:mail\.mailroom\.example ~all$/m);
    expect(result.stdout).toMatch(/^TXT\s+_dmarc\.acme\.example\s+missing \(optional\)\s+v=DMARC1; p=none;$/m);
    expect(result.stdout).toContain('\n\nTXT bounces.acme.example has "v=spf1 -all" instead.\n');
  });

  it("exits 1 with the API's 404 for a domain the workspace does not have", async () => {
    const result = await runCli(["domains", "get", "dom_nope"], { env, fetch: stubApi(404, problemBody(404, "not_found")).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 404, code: "not_found" });
  });

  it("exits 2 without the domain id", async () => {
    const result = await runCli(["domains", "get"], { env, fetch: stubApi(200, verified).fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toBe("Missing <domain_id>. Usage: mailroom domains get <domain_id>");
  });
});

describe("mailroom domains delete", () => {
  it("deletes the domain and prints the API's answer", async () => {
    const api = stubApi(200, deleted);

    const result = await runCli(["domains", "delete", DOMAIN_ID, "--yes"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<DeletedObject>()).toEqual({ id: DOMAIN_ID, object: "domain", deleted: true });
    expect(api.seen).toMatchObject([{ method: "DELETE", target: `/v1/domains/${DOMAIN_ID}`, idempotencyKey: null }]);
  });

  it("says so on a terminal, and when to remove the DNS records as a hint", async () => {
    const result = await runCli(["domains", "delete", DOMAIN_ID, "--yes"], { env, tty: true, fetch: stubApi(200, deleted).fetch });

    expect(result.stdout).toBe(`Deleted ${DOMAIN_ID}.\n`);
    expect(result.stderr).toBe("Remove its DNS records once the mail it signed has been delivered.\n");
  });
});

describe("mailroom domains verify", () => {
  it("asks the API to look the records up, with an Idempotency-Key and no body, and prints the domain", async () => {
    const api = stubApi(200, verified);

    const result = await runCli(["domains", "verify", DOMAIN_ID], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Domain>().status).toBe("verified");
    expect(api.seen).toEqual([{ method: "POST", target: `/v1/domains/${DOMAIN_ID}/verify`, authorization: "Bearer svc_test_stub", idempotencyKey: expect.any(String), body: undefined }]);
  });

  it("says Verified on a terminal once every required record is found", async () => {
    const result = await runCli(["domains", "verify", DOMAIN_ID], { env, tty: true, fetch: stubApi(200, verified).fetch });

    expect(result.stdout).toMatch(/^status\s+verified$/m);
    expect(result.stdout).toMatch(/\n\nVerified: live mail may be sent from this domain\.\n$/);
    expect(result.stderr).toBe("");
  });

  it("says how many required records are still missing, and exits 0: the check itself worked", async () => {
    const waiting: Domain = { ...pending, records: pending.records.map((record) => (record.purpose === "dkim" ? { ...record, status: "missing" } : { ...record, status: "verified" })) };

    const result = await runCli(["domains", "verify", DOMAIN_ID], { env, tty: true, fetch: stubApi(200, waiting).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/\n\nStill pending: 2 required records not found as published\.\n$/);
    expect(result.stderr).toBe(`DNS changes can take a while to show; verifying again is harmless: mailroom domains verify ${DOMAIN_ID}\n`);
  });

  it("says since when records are missing and that live mail still goes out, for a domain in its grace period", async () => {
    const result = await runCli(["domains", "verify", DOMAIN_ID], { env, tty: true, fetch: stubApi(200, failing).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^status\s+temporary_failure$/m);
    expect(result.stdout).toMatch(/^failing_since\s+2026-11-22T15:20:00Z$/m);
    expect(result.stdout).toMatch(/^next_check_at\s+2026-11-22T17:20:00Z$/m);
    expect(result.stdout).toMatch(/^grace_ends_at\s+2026-11-25T15:20:00Z$/m);
    expect(result.stdout).toContain("Records missing since 2026-11-22T15:20:00Z: 1 required record not found as published. Live mail is still sent until the grace period ends at 2026-11-25T15:20:00Z, then refused");
    expect(result.stdout).not.toContain("domains verify dom_");
    expect(result.stderr).toBe(`Publish the missing records again, then run: mailroom domains verify ${DOMAIN_ID}\n`);
  });

  it("says live mail is refused for a failed domain, which the server no longer checks by itself", async () => {
    const failed: Domain = { ...failing, status: "failed", next_check_at: null };

    const result = await runCli(["domains", "verify", DOMAIN_ID], { env, tty: true, fetch: stubApi(200, failed).fetch });

    expect(result.stdout).toMatch(/^next_check_at\s+\(none: checked when you run domains verify\)$/m);
    expect(result.stdout).toContain("Failed: 1 required record not found as published, past the grace period. Live mail from this domain is refused");
    expect(result.stdout).not.toContain("domains verify dom_");
    expect(result.stderr).toBe(`Publish the missing records again, then run: mailroom domains verify ${DOMAIN_ID}\n`);
  });
});

describe("mailroom domains rotate-dkim", () => {
  it("asks the API for new keys, with an Idempotency-Key and no body, and prints the domain", async () => {
    const api = stubApi(200, rotating);

    const result = await runCli(["domains", "rotate-dkim", DOMAIN_ID], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Domain>()).toEqual(rotating);
    expect(api.seen).toEqual([{ method: "POST", target: `/v1/domains/${DOMAIN_ID}/rotate-dkim`, authorization: "Bearer svc_test_stub", idempotencyKey: expect.any(String), body: undefined }]);
  });

  it("lists the new records to publish on a terminal, marked as new keys, and what happens next as a hint", async () => {
    const result = await runCli(["domains", "rotate-dkim", DOMAIN_ID], { env, tty: true, fetch: stubApi(200, rotating).fetch });

    expect(result.stdout).toMatch(/^dkim_rotation\s+mr2611q7k-rsa, mr2611q7k-ed \(since 2026-11-22T10:00:00Z; not signing yet\)$/m);
    expect(result.stdout).toMatch(/^TXT\s+mr2611q7k-rsa\._domainkey\.acme\.example\s+pending \(new key\)\s+v=DKIM1; k=rsa; p=/m);
    expect(result.stdout).toMatch(/^TXT\s+mr2611q7k-ed\._domainkey\.acme\.example\s+pending \(new key\)\s+v=DKIM1; k=ed25519; p=/m);
    expect(result.stdout).not.toContain("Publish");
    expect(result.stdout).not.toContain("domains verify dom_");
    expect(result.stderr).toBe(
      `Publish the records marked "new key", then run: mailroom domains verify ${DOMAIN_ID}\n` +
        "Mail is signed with the current keys until every new record is found; keep the old records published for a week after that.\n",
    );
  });

  it("keeps that hint off stdout, and off stderr unless that is a terminal (--no-json | tail)", async () => {
    const piped = await runCli(["domains", "rotate-dkim", DOMAIN_ID, "--no-json"], { env, stderrTty: true, fetch: stubApi(200, rotating).fetch });
    const logged = await runCli(["domains", "rotate-dkim", DOMAIN_ID, "--no-json"], { env, fetch: stubApi(200, rotating).fetch });

    expect(piped.stdout).toMatch(/^dkim_rotation\s+/m);
    expect(piped.stdout).not.toContain("Publish");
    expect(piped.stderr).toContain(`mailroom domains verify ${DOMAIN_ID}`);
    expect(logged.stdout).not.toContain("Publish");
    expect(logged.stderr).toBe("");
  });

  it("exits 1 with the API's 409 domain_not_verified for a domain that is not verified", async () => {
    const result = await runCli(["domains", "rotate-dkim", DOMAIN_ID], { env, fetch: stubApi(409, problemBody(409, "domain_not_verified")).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 409, code: "domain_not_verified" });
  });
});

describe("mailroom domains --help", () => {
  it("lists every verb with an example", async () => {
    const result = await runCli(["domains", "--help"], { env: {} });

    expect(result.code).toBe(0);
    for (const verb of ["create", "list", "get <domain_id>", "delete <domain_id>", "verify <domain_id>"]) expect(result.stdout).toContain(`mailroom domains ${verb}`);
    expect(result.stdout).toContain("mailroom domains create --name acme.example");
  });

  it("shows a verb's flags and examples", async () => {
    const result = await runCli(["domains", "create", "--help"], { env: {} });

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ +--return-path-subdomain +The label bounces come back to/m);
    expect(result.stdout).toContain("Examples:\n  mailroom domains create --name acme.example");
  });
});
