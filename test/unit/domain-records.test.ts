import { describe, expect, it } from "vitest";
import { checkRecord, recordsFor, trackingRecord, withCurrentHosts, type DomainRecord } from "../../src/domain/domain-records.js";
import { normaliseDomainName } from "../../src/services/domains.js";

const HOST = "mail.mailroom.test";
const RSA_P = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAxyz+/abc=";
const records = recordsFor(
  "acme.example",
  "bounces.acme.example",
  [
    { selector: "mr2611abc-rsa", dns_value: `v=DKIM1; k=rsa; p=${RSA_P}` },
    { selector: "mr2611abc-ed", dns_value: "v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=" },
  ],
  HOST,
);
const byPurpose = (purpose: DomainRecord["purpose"]) => records.find((r) => r.purpose === purpose)!;
const txt = (purpose: DomainRecord["purpose"], ...values: string[]) => checkRecord(byPurpose(purpose), { type: "TXT", txt: values }, HOST).status;

describe("normaliseDomainName", () => {
  it.each([
    ["acme.example", "acme.example"],
    ["  ACME.Example. ", "acme.example"],
    ["Bücher.example", "xn--bcher-kva.example"],
    ["xn--bcher-kva.example", "xn--bcher-kva.example"],
    ["mail.eu.acme.example", "mail.eu.acme.example"],
    // IDNA's other full stops are dots too, a trailing one included.
    ["bücher.example\u3002", "xn--bcher-kva.example"],
    ["acme.ｅｘａｍｐｌｅ．", "acme.example"],
  ])("%j is %j", (input, expected) => {
    expect(normaliseDomainName(input)).toBe(expected);
  });

  it.each([["acme"], ["acme..example"], ["-acme.example"], ["acme.example/x"], ["acme.example?x"], ["acme.example#x"], ["acme.example\\x"], ["exa%6dple.com"], ["acme.example.."], ["a@acme.example"], ["_dmarc.acme.example"], ["1.2.3.4"], [""], ["."]])("refuses %j", (input) => {
    expect(normaliseDomainName(input)).toBeNull();
  });
});

describe("checkRecord", () => {
  it("MX: any exchange that is this host, case and trailing dot aside", () => {
    const mx = byPurpose("return_path");
    expect(checkRecord(mx, { type: "MX", mx: [] }, HOST)).toEqual({ status: "missing", found: [] });
    expect(checkRecord(mx, { type: "MX", mx: [{ priority: 5, exchange: "other.example." }] }, HOST)).toEqual({ status: "mismatch", found: ["5 other.example"] });
    expect(checkRecord(mx, { type: "MX", mx: [{ priority: 5, exchange: "other.example" }, { priority: 10, exchange: "MAIL.mailroom.test." }] }, HOST).status).toBe("verified");
  });

  it("SPF: exactly one v=spf1 record holding a:<host>", () => {
    expect(txt("spf")).toBe("missing");
    expect(txt("spf", `v=spf1 a:${HOST} ~all`)).toBe("verified");
    expect(txt("spf", `v=spf1 ip4:192.0.2.1 +a:${HOST.toUpperCase()}. -all`, "other=1")).toBe("verified");
    expect(txt("spf", `v=spf1 -a:${HOST} ~all`)).toBe("mismatch");
    expect(txt("spf", `v=spf1 a:${HOST}.evil.example ~all`)).toBe("mismatch");
    expect(txt("spf", `v=spf1 include:${HOST} ~all`)).toBe("mismatch");
    expect(txt("spf", `v=spf1 a:${HOST} ~all`, "v=spf1 -all")).toBe("mismatch");
    expect(txt("spf", "other=1")).toBe("mismatch");
    // RFC 7208 §5.1: mechanisms after "all" are never evaluated, so they authorise nothing.
    expect(txt("spf", `v=spf1 -all a:${HOST}`)).toBe("mismatch");
    expect(txt("spf", `v=spf1 mx ~all a:${HOST}`)).toBe("mismatch");
    expect(txt("spf", `v=spf1 mx ?all +a:${HOST}`)).toBe("mismatch");
    expect(txt("spf", `v=spf1 mx a:${HOST} -all`)).toBe("verified");
  });

  it("DKIM: a record with the same p=, whitespace aside", () => {
    expect(txt("dkim", `v=DKIM1; k=rsa; p=${RSA_P}`)).toBe("verified");
    expect(txt("dkim", `v=DKIM1;k=rsa;p=${RSA_P.slice(0, 10)} ${RSA_P.slice(10)}`)).toBe("verified");
    expect(txt("dkim", "unrelated", `p=${RSA_P}`)).toBe("verified");
    expect(txt("dkim", `v=DKIM1; k=rsa; p=${RSA_P}x`)).toBe("mismatch");
    expect(txt("dkim", "v=DKIM1; k=rsa; p=")).toBe("mismatch");
  });

  it("keeps a bounded part of an enormous answer in found", () => {
    const answer = Array.from({ length: 50 }, (_, i) => `${i === 0 ? "v=DMARC1; p=none; " : ""}x=${String(i).repeat(3000)}`);
    const { status, found } = checkRecord(byPurpose("dmarc"), { type: "TXT", txt: answer }, HOST);
    expect(status).toBe("verified");
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThan(10);
    expect(found[0]!.length).toBeLessThanOrEqual(1025);
  });

  it("DMARC: any v=DMARC1 record", () => {
    expect(txt("dmarc", "v=DMARC1; p=reject")).toBe("verified");
    expect(txt("dmarc", "v=DMARC1")).toBe("verified");
    expect(txt("dmarc", "v=DMARC2; p=none")).toBe("mismatch");
    expect(txt("dmarc")).toBe("missing");
  });

  it("DMARC: two records at one name are none (RFC 7489 §6.6.3)", () => {
    expect(txt("dmarc", "v=DMARC1; p=reject", "v=DMARC1; p=none")).toBe("mismatch");
    expect(txt("dmarc", "v=DMARC1; p=reject", "google-site-verification=abc")).toBe("verified");
  });

  it("DMARC: a subdomain without a record of its own is covered by its organisational domain's one record (RFC 7489 §6.6.3)", () => {
    const dmarc = recordsFor("mail.acme.example", "bounces.mail.acme.example", [], HOST).find((r) => r.purpose === "dmarc")!;
    expect(dmarc.name).toBe("_dmarc.mail.acme.example");
    const check = (txt: string[], organizational: string[] | undefined) => checkRecord(dmarc, { type: "TXT", txt, organizational }, HOST);
    expect(check([], ["v=DMARC1; p=reject", "other=1"])).toEqual({ status: "verified", found: ["v=DMARC1; p=reject"] });
    expect(check(["other=1"], ["v=DMARC1; p=reject"])).toEqual({ status: "verified", found: ["v=DMARC1; p=reject"] });
    // Not when the organisational domain has none, or two: the subdomain's own answer stands.
    expect(check([], [])).toEqual({ status: "missing", found: [] });
    expect(check(["other=1"], ["v=DMARC1; p=reject", "v=DMARC1; p=none"])).toEqual({ status: "mismatch", found: ["other=1"] });
    // Two at the subdomain end the search there: its organisational domain's is not looked at.
    expect(check(["v=DMARC1; p=none", "v=DMARC1; p=none"], ["v=DMARC1; p=reject"]).status).toBe("mismatch");
  });
});

describe("withCurrentHosts", () => {
  it("rewrites the values naming this server's host names, and starts a record whose value changed over as pending", () => {
    const checked = [...records, trackingRecord("track.acme.example", "t.mailroom.test")].map((r) => ({ ...r, status: "verified" as const, found: [r.value] }));
    const current = withCurrentHosts(checked, "mta2.mailroom.test", "t2.mailroom.test");
    expect(current.map((r) => [r.purpose, r.value, r.status])).toEqual([
      ["return_path", "mta2.mailroom.test", "pending"],
      ["spf", "v=spf1 a:mta2.mailroom.test ~all", "pending"],
      ["dkim", records[2]!.value, "verified"],
      ["dkim", records[3]!.value, "verified"],
      ["dmarc", "v=DMARC1; p=none;", "verified"],
      ["tracking", "t2.mailroom.test", "pending"],
    ]);
    expect(current[0]!.found).toEqual([HOST]);
    expect(withCurrentHosts(checked, HOST, "t.mailroom.test")).toEqual(checked);
  });
});

describe("the tracking domain's record", () => {
  const record = trackingRecord("track.acme.example", "t.mailroom.test");
  const cname = (...targets: string[]) => checkRecord(record, { type: "CNAME", cname: targets }, "t.mailroom.test");

  it("is an optional CNAME from the tracking domain to the tracking host", () => {
    expect(record).toEqual({ purpose: "tracking", type: "CNAME", name: "track.acme.example", value: "t.mailroom.test", priority: null, required: false, status: "pending", found: [] });
  });

  it("is verified when the name points at the tracking host (whatever the case or trailing dot), a mismatch when elsewhere, missing when absent", () => {
    expect(cname("T.Mailroom.Test.")).toEqual({ status: "verified", found: ["t.mailroom.test"] });
    expect(cname("elsewhere.example")).toEqual({ status: "mismatch", found: ["elsewhere.example"] });
    expect(cname()).toEqual({ status: "missing", found: [] });
  });
});
