import { APIError } from "mailroom";
import { describe, expect, it } from "vitest";
import { describeRestrictions, givenRestrictions, listOrNull, listText, parseList, restrictionProblems } from "../../dashboard/src/lib/api-key-restrictions.js";

/**
 * An API key's restrictions in the dashboard's helpers (dashboard/src/lib/api-key-restrictions.ts):
 * the textareas' lists, the line the key list shows, and the server's problems put beside their
 * field. The forms themselves are driven in the browser (test/e2e/api-key-restrictions.test.ts).
 */
const NONE = { allowed_ips: null, sender_domains: null, recipient_domains: null };

const validationFailed = (...errors: Array<{ pointer: string; message: string }>) =>
  new APIError(
    422,
    {
      type: "https://mailroom.dev/problems/validation_failed",
      title: "Validation failed",
      status: 422,
      code: "validation_failed",
      request_id: "req_test",
      errors: errors.map((error) => ({ location: "body" as const, ...error })),
    },
    new Headers(),
  );

describe("parseList", () => {
  it("splits on commas and line breaks, trims each entry and drops the empty ones", () => {
    expect(parseList(" 203.0.113.0/24,10.0.0.1 \n\n  2001:db8::/32 ,\r\n, ")).toEqual(["203.0.113.0/24", "10.0.0.1", "2001:db8::/32"]);
  });

  it("keeps each entry once, as the contract's lists may not repeat one", () => {
    expect(parseList("acme.example\nmail.acme.example, acme.example")).toEqual(["acme.example", "mail.acme.example"]);
  });

  it("reads an empty or blank field as no entries", () => {
    expect(parseList("")).toEqual([]);
    expect(parseList(" ,\n ")).toEqual([]);
  });
});

describe("listOrNull", () => {
  it("is null, no limit, for a field without entries, else the entries", () => {
    expect(listOrNull("  \n")).toBeNull();
    expect(listOrNull("acme.example")).toEqual(["acme.example"]);
  });
});

describe("listText", () => {
  it("shows a limit one entry a line, and no limit as an empty field", () => {
    expect(listText(["acme.example", "mail.acme.example"])).toBe("acme.example\nmail.acme.example");
    expect(listText(null)).toBe("");
    expect(parseList(listText(["a.example", "b.example"]))).toEqual(["a.example", "b.example"]);
  });
});

describe("givenRestrictions", () => {
  it("leaves out the limits not set, and is undefined when none is", () => {
    expect(givenRestrictions({ ...NONE, sender_domains: ["acme.example"] })).toEqual({ sender_domains: ["acme.example"] });
    expect(givenRestrictions(NONE)).toBeUndefined();
  });
});

describe("describeRestrictions", () => {
  it("is null for a key without restrictions", () => {
    expect(describeRestrictions(NONE)).toBeNull();
  });

  it("names the addresses, then both domain limits once either is set", () => {
    expect(describeRestrictions({ allowed_ips: ["203.0.113.0/24"], sender_domains: ["acme.example"], recipient_domains: null })).toBe(
      "Only from 203.0.113.0/24 · sends from acme.example · to anyone",
    );
    expect(describeRestrictions({ ...NONE, recipient_domains: ["acme.example", "team.example"] })).toBe("Sends from any domain · to acme.example, team.example");
    expect(describeRestrictions({ ...NONE, allowed_ips: ["10.0.0.0/8", "2001:db8::/32"] })).toBe("Only from 10.0.0.0/8, 2001:db8::/32");
  });
});

describe("restrictionProblems", () => {
  it("gives a field the problems at its pointer and at its entries, and no other field's", () => {
    const error = validationFailed(
      { pointer: "/restrictions/allowed_ips/1", message: '"10.0.0.300" is not an IP address or CIDR range' },
      { pointer: "/restrictions/sender_domains", message: "only a sending_access key can be limited to domains" },
      { pointer: "/name", message: "must NOT have more than 100 characters" },
    );
    expect(restrictionProblems(error, "allowed_ips", ["10.0.0.1", "10.0.0.300"])).toEqual(['"10.0.0.300" is not an IP address or CIDR range']);
    expect(restrictionProblems(error, "sender_domains")).toEqual(["only a sending_access key can be limited to domains"]);
    expect(restrictionProblems(error, "recipient_domains")).toEqual([]);
  });

  it("leads an entry's problem with the entry sent, when the message does not quote it", () => {
    const error = validationFailed({ pointer: "/restrictions/sender_domains/1", message: "must match pattern" });
    expect(restrictionProblems(error, "sender_domains", ["acme.example", "not a domain"])).toEqual(['"not a domain" must match pattern']);
    expect(restrictionProblems(error, "sender_domains")).toEqual(["must match pattern"]);
  });

  it("finds nothing in anything but a 422", () => {
    expect(restrictionProblems(new Error("offline"), "allowed_ips")).toEqual([]);
    expect(restrictionProblems(undefined, "allowed_ips")).toEqual([]);
  });
});
