import { describe, expect, it } from "vitest";
import { simulatedOutcome } from "../../src/domain/simulator.js";

describe("simulatedOutcome", () => {
  it.each([
    ["delivered@simulator.test", "delivered"],
    ["bounced@simulator.test", "bounced"],
    ["bounced+signup-42@simulator.test", "bounced"],
    ["Deferred@simulator.test", "deferred"],
    ["complained@simulator.test", "complained"],
    ["opened@simulator.test", "opened"],
    ["clicked@simulator.test", "clicked"],
    ["replied@simulator.test", "replied"],
    ["unsubscribed+news@simulator.test", "unsubscribed"],
    ["whatever@simulator.test", "delivered"],
    ["bounced@example.com", "delivered"],
  ])("%s -> %s", (address, outcome) => {
    expect(simulatedOutcome(address)).toBe(outcome);
  });
});
