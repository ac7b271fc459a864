import { describe, expect, it } from "vitest";
import { checkRecord, dkimKeyRecordFault, recordsFor, trackingRecord, withCurrentHosts, type DomainRecord } from "../../src/domain/domain-records.js";
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
  describe("MX (return path)", () => {
    const mx = byPurpose("return_path");
    const check = (...exchanges: Array<[number, string]>) => checkRecord(mx, { type: "MX", mx: exchanges.map(([priority, exchange]) => ({ priority, exchange })) }, HOST);

    it("is verified when this host is the preferred exchange, case and trailing dot aside; other hosts may be fallbacks", () => {
      expect(check()).toEqual({ status: "missing", found: [] });
      expect(check([10, "MAIL.mailroom.test."])).toEqual({ status: "verified", found: ["10 MAIL.mailroom.test"] });
      expect(check([20, "backup.example"], [10, HOST])).toEqual({ status: "verified", found: [`10 ${HOST}`, "20 backup.example"] });
    });

    // RFC 5321 §5.1: senders try the lowest preference first, so bounces and complaints would go to another host.
    // (This test said "verified" for the first case before: any exchange anywhere counted.)
    it("is a mismatch when another host is preferred, or shares the lowest preference, and found lists the preferred first", () => {
      expect(check([10, "MAIL.mailroom.test."], [5, "other.example."])).toEqual({ status: "mismatch", found: ["5 other.example", "10 MAIL.mailroom.test"] });
      expect(check([10, HOST], [10, "other.example"])).toEqual({ status: "mismatch", found: [`10 ${HOST}`, "10 other.example"] });
      expect(check([5, "other.example."])).toEqual({ status: "mismatch", found: ["5 other.example"] });
      // A null MX (RFC 7505) says the name takes no mail at all.
      expect(check([0, "."])).toEqual({ status: "mismatch", found: ["0 "] });
    });
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

  // RFC 7208 §4.6 and §12: a record with a term that is not a known mechanism or a name=value
  // modifier is a permerror at every receiver, whatever else it holds.
  it.each([
    [`v=spf1 a:${HOST} ip4:192.0.2.0/24 ip6:2001:db8::/32 mx:mx.acme.example/24//64 ptr exists:%{i}._spf.acme.example include:_spf.example.net ~all`],
    [`v=spf1 a:${HOST} redirect=_spf.acme.example`],
    [`v=spf1 a:${HOST} exp=explain.%{d} ?all`],
    [`v=spf1 a:${HOST} custom-mod=anything ~all`],
    [`V=SPF1 A:${HOST} ~ALL`],
    [`v=spf1 a:${HOST} a/24 -all   `],
  ])("SPF: verifies a well-formed record %j", (value) => {
    expect(txt("spf", value)).toBe("verified");
  });

  it.each([
    [`v=spf1 a:${HOST} foo ~all`, "an unknown mechanism"],
    [`v=spf1 a:${HOST} ip4:192.0.2.300 ~all`, "a bad IPv4 address"],
    [`v=spf1 a:${HOST} ip4:192.0.2.0/33 ~all`, "an IPv4 prefix over 32"],
    [`v=spf1 a:${HOST} ip6:2001:db8::/129 ~all`, "an IPv6 prefix over 128"],
    [`v=spf1 a:${HOST} ip6:192.0.2.1 ~all`, "an IPv4 address as ip6"],
    [`v=spf1 a:${HOST} include: ~all`, "an include without a domain"],
    [`v=spf1 a:${HOST} include:_spf.example.net/24 ~all`, "a prefix on include"],
    [`v=spf1 a:${HOST} !mx ~all`, "an unknown qualifier"],
    [`v=spf1 a:${HOST} =x ~all`, "a modifier without a name"],
    [`v=spf1 a:${HOST} redirect=a.example redirect=b.example`, "redirect twice (§6)"],
    [`v=spf1 a:${HOST} exp=a.example exp=b.example ~all`, "exp twice (§6)"],
    [`v=spf1 a:${HOST} all:x`, "all with a value"],
    [`v=spf1 a:${HOST}\t~all`, "a tab between terms (terms are separated by spaces)"],
    [`v=spf1 a:${HOST} exists:%{z}.acme.example ~all`, "an unknown macro letter"],
    [`v=spf1 a:${HOST} a:acme.example% ~all`, "a lone % in a domain"],
    [`v=spf1 a:${HOST} a/024 ~all`, "a prefix length with a leading zero"],
    [`v=spf1 a:${HOST} mx:acme.example/24/x ~all`, "junk after a prefix length"],
    [`v=spf1 a:${HOST} a: ~all`, "a: without a domain"],
    [`v=spf1 a:${HOST} a:localhost ~all`, "a domain without a dot (§7.1 domain-end)"],
  ])("SPF: refuses %j (%s)", (value) => {
    expect(txt("spf", value)).toBe("mismatch");
  });

  it("SPF: a record must begin with exactly v=spf1 and a space or its end (RFC 7208 §4.5)", () => {
    expect(txt("spf", ` v=spf1 a:${HOST} ~all`)).toBe("mismatch");
    expect(txt("spf", `v=spf10 a:${HOST} ~all`)).toBe("mismatch");
    expect(txt("spf", `v=spf1\ta:${HOST} ~all`)).toBe("mismatch");
    // Discarded records are not SPF records: one real one beside them still counts as the one.
    expect(txt("spf", ` v=spf1 -all`, `v=spf1 a:${HOST} ~all`)).toBe("verified");
  });

  it("DKIM: a record with the same p=, whitespace aside", () => {
    expect(txt("dkim", `v=DKIM1; k=rsa; p=${RSA_P}`)).toBe("verified");
    expect(txt("dkim", `v=DKIM1;k=rsa;p=${RSA_P.slice(0, 10)} ${RSA_P.slice(10)}`)).toBe("verified");
    expect(txt("dkim", "unrelated", `p=${RSA_P}`)).toBe("verified");
    expect(txt("dkim", `v=DKIM1; k=rsa; p=${RSA_P}x`)).toBe("mismatch");
    expect(txt("dkim", "v=DKIM1; k=rsa; p=")).toBe("mismatch");
  });

  describe("DKIM: the key record's tags (RFC 6376 §3.6.1)", () => {
    const ED_P = "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=";
    const rsa = records[2]!;
    const ed = records[3]!;
    const fault = (record: DomainRecord, value: string) => dkimKeyRecordFault(value, record.value);
    const status = (record: DomainRecord, value: string) => checkRecord(record, { type: "TXT", txt: [value] }, HOST).status;

    it.each([
      [rsa, `p=${RSA_P}`],
      [rsa, `v=DKIM1; p=${RSA_P};`],
      [rsa, `v=DKIM1; h=sha1:sha256; k=rsa; s=email; t=y; n=notes here; p=${RSA_P}`],
      [rsa, `v=DKIM1; h = sha256 ; s=*:tlsrpt; x_custom=1; p=${RSA_P}`],
      [ed, `v=DKIM1; k=ed25519; p=${ED_P}`],
      [ed, `v=DKIM1;k=ed25519;h=sha256;s=email;p=${ED_P}`],
    ])("accepts a record of the key with tags that allow it to sign mail: %#", (record, value) => {
      expect(fault(record, value)).toBeNull();
      expect(status(record, value)).toBe("verified");
    });

    it.each([
      [rsa, `v=DKIM1; k=rsa; p=${RSA_P}; p=${RSA_P}`, /duplicate tag p=/],
      [rsa, `v=DKIM1; v=DKIM1; p=${RSA_P}`, /duplicate tag v=/],
      [rsa, `v=DKIM2; k=rsa; p=${RSA_P}`, /v=/],
      [rsa, `v=dkim1; k=rsa; p=${RSA_P}`, /v=/],
      [rsa, `k=rsa; v=DKIM1; p=${RSA_P}`, /v= .*first/],
      [rsa, `v=DKIM1; k=ed25519; p=${RSA_P}`, /k=ed25519/],
      [ed, `v=DKIM1; p=${ED_P}`, /k=rsa/],
      [ed, `v=DKIM1; k=rsa; p=${ED_P}`, /k=rsa/],
      [rsa, `v=DKIM1; h=sha1; p=${RSA_P}`, /h=/],
      [rsa, `v=DKIM1; s=tlsrpt; p=${RSA_P}`, /s=/],
      [rsa, `v=DKIM1; k=rsa`, /p=/],
      [rsa, `v=DKIM1; k=rsa; p=${RSA_P}x`, /p=/],
      [rsa, `v=DKIM1; garbage; p=${RSA_P}`, /tag=value/],
      // §3.2: a tag name is letters, digits and "_".
      [rsa, `v=DKIM1; x-custom=1; p=${RSA_P}`, /tag name/],
    ])("refuses a record whose tags are wrong, saying which: %#", (record, value, reason) => {
      expect(fault(record, value)).toMatch(reason);
      expect(status(record, value)).toBe("mismatch");
    });
  });

  it("keeps a bounded part of an enormous answer in found", () => {
    const answer = Array.from({ length: 50 }, (_, i) => `${i === 0 ? "v=DMARC1; p=none; " : ""}x=${String(i).repeat(3000)}`);
    const { status, found } = checkRecord(byPurpose("dmarc"), { type: "TXT", txt: answer }, HOST);
    expect(status).toBe("verified");
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThan(10);
    expect(found[0]!.length).toBeLessThanOrEqual(1025);
  });

  it("DMARC: one v=DMARC1 record with a valid policy", () => {
    expect(txt("dmarc", "v=DMARC1; p=reject")).toBe("verified");
    expect(txt("dmarc", "v=DMARC1;p=quarantine;rua=mailto:d@acme.example")).toBe("verified");
    expect(txt("dmarc", "v = DMARC1 ; P = None")).toBe("verified");
    expect(txt("dmarc", "v=DMARC1; p=none; sp=reject")).toBe("verified");
    expect(txt("dmarc", "v=DMARC2; p=none")).toBe("mismatch");
    expect(txt("dmarc")).toBe("missing");
  });

  // RFC 7489 §6.3 and §6.6.3: without a valid p= a receiver applies no policy (bar the rua= fallback).
  // (This test said "verified" for "v=DMARC1" alone before.)
  it.each([["v=DMARC1"], ["v=DMARC1; rua=mailto:d@acme.example"], ["v=DMARC1; p=block"], ["v=DMARC1; p="], ["v=DMARC1; p=none; sp=maybe"], ["v=DMARC1; p=none; p=reject"]])("DMARC: refuses %j (no valid policy)", (value) => {
    expect(txt("dmarc", value)).toBe("mismatch");
  });

  // RFC 7489 §6.4: the version must match precisely and come first; other records are discarded.
  it.each([["v=dmarc1; p=none"], ["v=DMARC1x; p=none"], [" v=DMARC1; p=none"], ["p=none; v=DMARC1"]])("DMARC: %j is not a DMARC record", (value) => {
    expect(txt("dmarc", value)).toBe("mismatch");
    // So beside a real DMARC record it is not a second one.
    expect(txt("dmarc", value, "v=DMARC1; p=reject")).toBe("verified");
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
