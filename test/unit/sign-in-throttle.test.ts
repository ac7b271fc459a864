import { describe, expect, it } from "vitest";
import type { RateLimitsRepository } from "../../src/db/repositories/rate-limits.js";
import { clientBucket, SignInThrottle } from "../../src/services/sign-in-throttle.js";

describe("clientBucket", () => {
  it("keeps an IPv4 address whole", () => {
    expect(clientBucket("192.0.2.1")).toBe("192.0.2.1");
    expect(clientBucket("192.0.2.2")).not.toBe(clientBucket("192.0.2.1"));
  });

  it("counts an IPv4-mapped IPv6 address as the IPv4 address it carries", () => {
    expect(clientBucket("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(clientBucket("::FFFF:c000:0201")).toBe("192.0.2.1");
  });

  it("counts an IPv6 address by its /64, the block one subscriber is given", () => {
    const bucket = clientBucket("2001:db8:1:2::1");
    expect(bucket).toBe("2001:db8:1:2::/64");
    for (const sibling of ["2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:0DB8:0001:0002:0:0:0:2", "2001:db8:1:2:a:b:1.2.3.4"]) expect(clientBucket(sibling), sibling).toBe(bucket);
    expect(clientBucket("2001:db8:1:3::1")).not.toBe(bucket);
    expect(clientBucket("::1")).toBe("0:0:0:0::/64");
    expect(clientBucket("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  });

  it("keeps anything else as it is", () => {
    expect(clientBucket("unknown")).toBe("unknown");
  });
});

describe("SignInThrottle", () => {
  it("counts two addresses of one IPv6 /64 in one client counter", async () => {
    const buckets: string[] = [];
    const counters = { incrementWithinLimits: async (items: Array<{ bucket: string }>) => (buckets.push(...items.map((item) => item.bucket)), true) } as unknown as RateLimitsRepository;
    const throttle = new SignInThrottle(counters, { now: () => 0 });
    const first = await throttle.reserve({ client: "2001:db8:1:2::1" });
    const second = await throttle.reserve({ client: "2001:db8:1:2:dead:beef:0:7" });
    expect(first.client).toBe(second.client);
    expect(buckets).toEqual([first.client, first.client]);
  });
});
