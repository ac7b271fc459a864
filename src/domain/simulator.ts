import { domainOf } from "./addresses.js";

/**
 * The sandbox simulator (DESIGN.md §8): the outcome of a sandbox recipient is decided by its
 * address, deterministically, so every webhook a live integration receives can be rehearsed.
 * `<outcome>@simulator.test` and `<outcome>+anything@simulator.test`; anything else delivers.
 */
export const SIMULATOR_DOMAIN = "simulator.test";

export const SIMULATED_OUTCOMES = ["delivered", "bounced", "soft_bounced", "deferred", "complained", "opened", "clicked", "replied", "unsubscribed"] as const;
export type SimulatedOutcome = (typeof SIMULATED_OUTCOMES)[number];

export function simulatedOutcome(address: string): SimulatedOutcome {
  if (domainOf(address) !== SIMULATOR_DOMAIN) return "delivered";
  const local = address.slice(0, address.lastIndexOf("@")).toLowerCase();
  const tag = local.split("+", 1)[0]!;
  return (SIMULATED_OUTCOMES as readonly string[]).includes(tag) ? (tag as SimulatedOutcome) : "delivered";
}
