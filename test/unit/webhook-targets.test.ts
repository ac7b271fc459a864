import { describe, expect, it } from "vitest";
import { isForbiddenAddress } from "../../src/webhooks/target-guard.js";

describe("isForbiddenAddress", () => {
  it.each([
    "127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.0.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "0.1.2.3", "224.0.0.1", "255.255.255.255", "198.18.0.1",
    "::", "::1", "[::1]", "fe80::1", "febf::1", "fc00::1", "fd00::1", "ff02::1",
    "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::127.0.0.1",
    "64:ff9b:1::1", "64:ff9b:1::5db8:d822",
  ])("refuses %s", (address) => expect(isForbiddenAddress(address)).toBe(true));

  // RFC 6052's well-known prefix: a NAT64 gateway forwards 64:ff9b::a.b.c.d to a.b.c.d.
  it.each([
    ["64:ff9b::7f00:1", "127.0.0.1"],
    ["64:ff9b::127.0.0.1", "127.0.0.1"],
    ["[64:ff9b::7f00:1]", "127.0.0.1"],
    ["64:FF9B:0:0:0:0:a00:1", "10.0.0.1"],
    ["64:ff9b::a9fe:a9fe", "169.254.169.254"],
    ["64:ff9b::c0a8:101", "192.168.1.1"],
    ["64:ff9b::", "0.0.0.0"],
    ["64:ff9b::7f00:1%eth0", "127.0.0.1"],
  ])("refuses the NAT64 address %s, which reaches %s", (address) => expect(isForbiddenAddress(address)).toBe(true));

  // RFC 3056's 6to4: a host or relay with a 6to4 route tunnels 2002:AABB:CCDD::/48 to AA.BB.CC.DD.
  it.each([
    ["2002:7f00:1::", "127.0.0.1"],
    ["2002:7f00:1::1", "127.0.0.1"],
    ["[2002:7f00:1::1]", "127.0.0.1"],
    ["2002:a00:1:0:0:0:0:1", "10.0.0.1"],
    ["2002:a9fe:a9fe::1", "169.254.169.254"],
    ["2002:c0a8:101:5::1%eth0", "192.168.1.1"],
    ["2002::1", "0.0.0.0"],
    ["2002:6440:1::1:10.0.0.1", "100.64.0.1"],
  ])("refuses the 6to4 address %s, which reaches %s", (address) => expect(isForbiddenAddress(address)).toBe(true));

  // RFC 2765's SIIT: a stateless translator forwards ::ffff:0:a.b.c.d to a.b.c.d.
  it.each([
    ["::ffff:0:127.0.0.1", "127.0.0.1"],
    ["::ffff:0:7f00:1", "127.0.0.1"],
    ["[::ffff:0:a00:1]", "10.0.0.1"],
    ["0:0:0:0:ffff:0:a9fe:a9fe", "169.254.169.254"],
  ])("refuses the SIIT address %s, which reaches %s", (address) => expect(isForbiddenAddress(address)).toBe(true));

  it.each(["::ffff:0:93.184.216.34", "::ffff:0:808:808"])("allows the SIIT address %s of a public IPv4 address", (address) =>
    expect(isForbiddenAddress(address)).toBe(false),
  );

  // RFC 4380's Teredo carries its client's IPv4 address inverted in the last 32 bits (f5ff:fffe is 10.0.0.1) and its server's in bits 32-63.
  it.each(["2001::1", "2001:0:4136:e378:8000:63bf:f5ff:fffe", "2001:0:7f00:1::1", "2001:0:5db8:d822:0:0:a247:2ddd"])("refuses the Teredo address %s, whatever it carries", (address) =>
    expect(isForbiddenAddress(address)).toBe(true),
  );

  it.each(["192.0.2.1", "198.51.100.7", "203.0.113.9", "2001:db8::1", "3fff::1", "2001:2::1", "100::1"])("refuses the documentation, benchmarking or discard address %s, which no real receiver has", (address) =>
    expect(isForbiddenAddress(address)).toBe(true),
  );

  it.each(["2002:5db8:d822::1", "2002:808:808::", "2002:808:808::127.0.0.1"])("allows the 6to4 address %s of a public IPv4 address", (address) =>
    expect(isForbiddenAddress(address)).toBe(false),
  );

  it.each(["64:ff9b::5db8:d822", "64:ff9b::93.184.216.34", "64:ff9b::808:808"])("allows the NAT64 address %s of a public IPv4 address", (address) =>
    expect(isForbiddenAddress(address)).toBe(false),
  );

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "172.15.255.255", "192.169.0.1", "100.128.0.1", "2606:2800:220:1:248:1893:25c8:1946", "::ffff:93.184.216.34", "2001:4860:4860::8888", "2001:1:2::1", "2001:200::1", "2400:cb00::1"])(
    "allows %s",
    (address) => expect(isForbiddenAddress(address)).toBe(false),
  );

  it("does not take a host name for an address", () => expect(isForbiddenAddress("localhost")).toBe(false));
});
