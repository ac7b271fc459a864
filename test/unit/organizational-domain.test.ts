import { describe, expect, it } from "vitest";
import { organizationalDomain, sameOrganization } from "../../src/domain/organizational-domain.js";

describe("organizationalDomain", () => {
  it.each([
    ["mx1.example.net", "example.net"],
    ["MX1.Example.NET.", "example.net"],
    ["a.b.example.co.uk", "example.co.uk"],
    // A private suffix (PSL's private section): each customer is an organisation of its own.
    ["shop.alice.github.io", "alice.github.io"],
    ["localhost", "localhost"],
  ])("%s belongs to %s", (name, organization) => {
    expect(organizationalDomain(name)).toBe(organization);
  });
});

describe("sameOrganization", () => {
  it("aligns a host with its registrable domain and with its siblings", () => {
    expect(sameOrganization("mx1.example.net", "example.net")).toBe(true);
    expect(sameOrganization("mx1.example.net", "eu.example.net")).toBe(true);
  });

  it("keeps apart names that only share a public suffix", () => {
    expect(sameOrganization("example.co.uk", "attacker.co.uk")).toBe(false);
    expect(sameOrganization("alice.github.io", "mallory.github.io")).toBe(false);
    expect(sameOrganization("example.net", "example.net.attacker.example")).toBe(false);
  });
});
