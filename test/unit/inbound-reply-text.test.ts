import { describe, expect, it } from "vitest";
import { splitReply } from "../../src/inbound/reply-text.js";

describe("splitReply", () => {
  it("separates Gmail's attribution line and the quoted lines under it", () => {
    const body = "Thanks, that worked!\n\nAda\n\nOn Sat, 21 Nov 2026 at 10:00, Acme <hello@acme.example> wrote:\n> Hello Ada\n> Your receipt is attached.\n";
    expect(splitReply(body)).toEqual({ text: "Thanks, that worked!\n\nAda", quoted: "On Sat, 21 Nov 2026 at 10:00, Acme <hello@acme.example> wrote:\n> Hello Ada\n> Your receipt is attached." });
  });

  it("finds an attribution that the client wrapped onto two lines", () => {
    const body = "Yes please.\r\n\r\nOn Sat, 21 Nov 2026 at 10:00, Acme Customer Support <hello@acme.example>\r\nwrote:\r\n> Shall we?\r\n";
    expect(splitReply(body)).toEqual({ text: "Yes please.", quoted: "On Sat, 21 Nov 2026 at 10:00, Acme Customer Support <hello@acme.example>\nwrote:\n> Shall we?" });
  });

  it("separates Outlook's original-message block", () => {
    expect(splitReply("Received, thank you.\n\n-----Original Message-----\nFrom: Acme\nSent: Saturday\n\nHello")).toEqual({ text: "Received, thank you.", quoted: "-----Original Message-----\nFrom: Acme\nSent: Saturday\n\nHello" });
    expect(splitReply("Noted.\n\nFrom: Acme <hello@acme.example>\nSent: Saturday, November 21, 2026 10:00\nTo: Ada\n\nHello")).toEqual({ text: "Noted.", quoted: "From: Acme <hello@acme.example>\nSent: Saturday, November 21, 2026 10:00\nTo: Ada\n\nHello" });
  });

  it("treats a trailing run of > lines as history, but keeps answers interleaved between quotes as new text", () => {
    expect(splitReply("Sounds good\n\n> Shall we meet?\n> Tuesday?")).toEqual({ text: "Sounds good", quoted: "> Shall we meet?\n> Tuesday?" });
    const interleaved = "> Shall we meet?\nYes.\n> Tuesday?\nNo, Wednesday.";
    expect(splitReply(interleaved)).toEqual({ text: interleaved, quoted: null });
  });

  it("splits a megabyte of short quoted lines in one pass, whatever follows them", () => {
    // Anyone holding a reply address can send this; a pass per ">" line took minutes.
    const quotes = ">\n".repeat(500_000);
    const started = performance.now();
    expect(splitReply(`${quotes}x\n`)).toEqual({ text: `${quotes}x`, quoted: null });
    expect(splitReply(`x\n${quotes}`)).toEqual({ text: "x", quoted: quotes.trimEnd() });
    // Generous: both take tens of milliseconds; the quadratic scan took about an hour.
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("keeps everything as new text when nothing is quoted, and gives nulls for an empty body", () => {
    expect(splitReply("Just a note.\n-- \nAda")).toEqual({ text: "Just a note.\n-- \nAda", quoted: null });
    expect(splitReply(undefined)).toEqual({ text: null, quoted: null });
    expect(splitReply("On Sat, Acme wrote:\n> only a quote")).toEqual({ text: null, quoted: "On Sat, Acme wrote:\n> only a quote" });
  });
});
