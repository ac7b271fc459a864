import { describe, expect, it } from "vitest";
import type { MessageRecord, RecipientRecord } from "../../src/db/repositories/messages.js";
import { simulatedOutcome } from "../../src/domain/simulator.js";
import { simulateDelivery } from "../../src/delivery/transports/sandbox.js";

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

describe("simulateDelivery", () => {
  /** The `url` of the click that clicked@simulator.test makes on a message with this HTML. */
  const clickedUrl = (html: string): unknown => {
    const recipient = { email: "clicked@simulator.test", position: 0, attempts: 0 } as RecipientRecord;
    const delivery = simulateDelivery(recipient, { html, text: null } as MessageRecord);
    return delivery.followUps?.find((f) => f.type === "message.clicked")?.data.url;
  };

  it("clicks the link a live click would record: entities decoded, the URL as the redirect serialises it", () => {
    // A live click's url is the href as a browser reads it (docs/tracking.md#what-is-rewritten);
    // a rehearsal that says `&amp;` where live mail says `&` fails the integration on going live.
    expect(clickedUrl(`<a href="https://acme.example/start?utm_source=mail&amp;utm_medium=email">Start</a>`)).toBe("https://acme.example/start?utm_source=mail&utm_medium=email");
    expect(clickedUrl(`<A HREF="HTTPS://Acme.Example/Start">Start</A>`)).toBe("https://acme.example/Start");
    expect(clickedUrl(`<a href=https://acme.example/start>Start</a>`)).toBe("https://acme.example/start");
  });

  it("clicks the first link click tracking would rewrite, not one in a comment or marked not to track", () => {
    const html = `<!--[if mso]><a href="https://acme.example/outlook">x</a><![endif]--><a data-mailroom-track="false" href="https://acme.example/private">p</a><a href="mailto:help@acme.example">m</a><a href="https://acme.example/start">Start</a>`;
    expect(clickedUrl(html)).toBe("https://acme.example/start");
  });

  it("clicks a placeholder when the message has no link that could be tracked", () => {
    expect(clickedUrl(`<p>No links, <a href="mailto:help@acme.example">only mail</a></p>`)).toBe("https://example.com/");
    expect(clickedUrl(null as unknown as string)).toBe("https://example.com/");
  });
});
