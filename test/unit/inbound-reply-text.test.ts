import { describe, expect, it } from "vitest";
import { historyStart, splitReply } from "../../src/inbound/reply-text.js";

/** How many times historyStart reads a line of `lines`: its work, counted rather than timed. */
function linesRead(lines: string[]): number {
  let reads = 0;
  const counted = new Proxy(lines, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  historyStart(counted);
  return reads;
}

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

  it("splits thousands of short quoted lines reading each line a few times, whatever follows them", () => {
    // Anyone holding a reply address can send this; a pass per ">" line (n²/2 reads) took minutes
    // for a megabyte. Counted, not timed: a clock flakes on a loaded machine.
    const quotes = Array.from({ length: 2_000 }, () => ">");
    for (const lines of [[...quotes, "x"], ["x", ...quotes]]) expect(linesRead(lines)).toBeLessThanOrEqual(3 * lines.length);
    const quoted = quotes.join("\n");
    expect(splitReply(`${quoted}\nx\n`)).toEqual({ text: `${quoted}\nx`, quoted: null });
    expect(splitReply(`x\n${quoted}\n`)).toEqual({ text: "x", quoted });
  });

  it("reads a French attribution, and a line that only begins like one with 50,000 spaces in it, in linear time (a backtracking pattern took half a minute)", () => {
    expect(splitReply("D'accord.\n\nLe 21 nov. 2026, Acme <hello@acme.example> a écrit :\n> Bonjour")).toEqual({ text: "D'accord.", quoted: "Le 21 nov. 2026, Acme <hello@acme.example> a écrit :\n> Bonjour" });
    // Timed, with three orders of magnitude to spare: a pattern's backtracking cannot be counted.
    const line = `Le 21 nov. 2026, Acme a écrit${" ".repeat(50_000)}x`;
    const started = performance.now();
    const split = splitReply(`Noted.\n${line}`);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(split).toEqual({ text: `Noted.\n${line}`, quoted: null });
  });

  it.each([
    ["German", "Danke.\n\nAm 21.11.2026 um 10:00 schrieb Acme <hello@acme.example>:\n> Hallo", "Am ", "schrieb "],
    ["Dutch", "Bedankt.\n\nOp 21 nov. 2026 om 10:00 schreef Acme <hello@acme.example>:\n> Hallo", "Op ", "schreef "],
  ])("reads a %s attribution, and a line that only begins like one with a million spaces in it, in linear time (a backtracking pattern took seconds)", (_language, reply, opening, verb) => {
    const [text, quoted] = [reply.slice(0, reply.indexOf("\n")), reply.slice(reply.indexOf("\n") + 2)];
    expect(splitReply(reply)).toEqual({ text, quoted });
    // The verb again and again, then the spaces: each verb is a place the pattern could try its tail from.
    const line = `${opening}${verb.repeat(37)}${" ".repeat(1_000_000)}x`;
    const started = performance.now();
    const split = splitReply(`Noted.\n${line}`);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(split).toEqual({ text: `Noted.\n${line}`, quoted: null });
  });

  it("keeps everything as new text when nothing is quoted, and gives nulls for an empty body", () => {
    expect(splitReply("Just a note.\n-- \nAda")).toEqual({ text: "Just a note.\n-- \nAda", quoted: null });
    expect(splitReply(undefined)).toEqual({ text: null, quoted: null });
    expect(splitReply("On Sat, Acme wrote:\n> only a quote")).toEqual({ text: null, quoted: "On Sat, Acme wrote:\n> only a quote" });
  });
});
