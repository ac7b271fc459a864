import { describe, expect, it } from "vitest";
import { addressAllowed, applyRestrictions, NO_RESTRICTIONS, outsideRestrictions } from "../../src/domain/key-restrictions.js";

const limitedTo = (allowed_ips: string[]) => ({ ...NO_RESTRICTIONS, allowed_ips });

describe("addressAllowed", () => {
  it("admits any address when the key has no address limit", () => {
    expect(addressAllowed(NO_RESTRICTIONS, "198.51.100.4")).toBe(true);
  });

  it.each([
    ["203.0.113.7", ["203.0.113.7"], true],
    ["203.0.113.8", ["203.0.113.7"], false],
    ["203.0.113.200", ["203.0.113.0/24"], true],
    ["203.0.114.1", ["203.0.113.0/24"], false],
    ["::ffff:203.0.113.9", ["203.0.113.0/24"], true],
    ["2001:db8::7", ["2001:db8::/32"], true],
    ["2001:db9::7", ["2001:db8::/32"], false],
    ["10.1.2.3", ["0.0.0.0/0"], true],
    ["203.0.113.7", ["2001:db8::/32"], false],
    ["not an address", ["0.0.0.0/0"], false],
  ])("%s against %j: %s", (address, allowed, expected) => {
    expect(addressAllowed(limitedTo(allowed), address)).toBe(expected);
  });
});

describe("applyRestrictions", () => {
  it("replaces the fields given, keeps the others, lifts with null, and lower-cases domains once", () => {
    const current = { allowed_ips: ["10.0.0.0/8"], sender_domains: ["acme.example"], recipient_domains: null };
    const { restrictions, errors } = applyRestrictions(current, { sender_domains: null, recipient_domains: ["Team.Example", "team.example"] }, "sending_access", "/restrictions");
    expect(errors).toEqual([]);
    expect(restrictions).toEqual({ allowed_ips: ["10.0.0.0/8"], sender_domains: null, recipient_domains: ["team.example"] });
  });

  it("refuses domain limits for a full_access key but lets it lift them or limit addresses", () => {
    expect(applyRestrictions(NO_RESTRICTIONS, { sender_domains: ["acme.example"] }, "full_access", "/restrictions").errors.map((e) => e.pointer)).toEqual(["/restrictions/sender_domains"]);
    expect(applyRestrictions(NO_RESTRICTIONS, { sender_domains: null, allowed_ips: ["::1"] }, "full_access", "/restrictions").errors).toEqual([]);
  });

  it.each(["10.0.0.0/33", "2001:db8::/129", "10.0.0.1/", "10.0.0.0/8/8", "10.0.0.0/-1", "example.com", "10.0.0.256"])("refuses %s as an address", (entry) => {
    const { errors } = applyRestrictions(NO_RESTRICTIONS, { allowed_ips: ["127.0.0.1", entry] }, "full_access", "/restrictions");
    expect(errors.map((e) => e.pointer)).toEqual(["/restrictions/allowed_ips/1"]);
  });
});

describe("outsideRestrictions", () => {
  it("names the sender and each recipient outside the domains, matching exactly and without regard to case", () => {
    const restrictions = { allowed_ips: null, sender_domains: ["acme.example"], recipient_domains: ["team.example"] };
    const recipients = [
      { type: "to", email: "ada@TEAM.example" },
      { type: "cc", email: "grace@eu.team.example" },
      { type: "bcc", email: "alan@example.com" },
    ];
    expect(outsideRestrictions(restrictions, "hello@ACME.example", recipients)).toEqual({ sender: null, recipients: recipients.slice(1) });
    expect(outsideRestrictions(restrictions, "hello@mail.acme.example", []).sender).toBe("hello@mail.acme.example");
  });
});
