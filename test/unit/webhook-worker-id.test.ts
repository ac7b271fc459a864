import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { LOCKED_BY_LENGTH, workerId } from "../../src/delivery/worker-id.js";
import { LEASE_COUNTER_LENGTH } from "../../src/webhooks/dispatcher.js";

/** The longest lease token the dispatcher writes after its id: `:` and the largest claim count in base 36. */
const LONGEST_COUNTER = `:${Number.MAX_SAFE_INTEGER.toString(36)}`;

const hostPart = (id: string) => id.slice(0, id.indexOf(`-${process.pid}-`));

describe("workerId", () => {
  it("names the host, the process and the role, as logs show them", () => {
    expect(workerId({ role: "webhooks" }, "mail-3")).toMatch(new RegExp(`^mail-3-${process.pid}-[0-9a-f]{6}-webhooks$`));
    expect(workerId({}, "mail-3")).toMatch(new RegExp(`^mail-3-${process.pid}-[0-9a-f]{6}$`));
    expect(workerId().startsWith(hostname().slice(0, 10))).toBe(true);
  });

  it.each([64, 253])("fits locked_by (VARCHAR(64)) with a %i-character host name, with room for the dispatcher's claim counter", (length) => {
    const host = `mailroom-worker-${"x".repeat(length - 16)}`;
    const id = workerId({ role: "webhooks", reserve: LEASE_COUNTER_LENGTH }, host);
    expect(`${id}${LONGEST_COUNTER}`.length).toBeLessThanOrEqual(LOCKED_BY_LENGTH);
    expect(LONGEST_COUNTER.length).toBeLessThanOrEqual(LEASE_COUNTER_LENGTH);
    expect(workerId({}, host).length).toBeLessThanOrEqual(LOCKED_BY_LENGTH);
    // Still readable, and two long names with the same beginning stay apart.
    expect(id).toMatch(new RegExp(`^mailroom-worker-x*~[0-9a-f]{8}-${process.pid}-[0-9a-f]{6}-webhooks$`));
    expect(hostPart(workerId({ role: "webhooks", reserve: LEASE_COUNTER_LENGTH }, `${host.slice(0, -1)}y`))).not.toBe(hostPart(id));
  });
});
