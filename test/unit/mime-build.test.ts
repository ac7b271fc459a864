import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import MailComposer from "nodemailer/lib/mail-composer/index.js";
import { describe, expect, it } from "vitest";
import { buildMime } from "../../src/delivery/mime-build.js";

type MailOptions = ConstructorParameters<typeof MailComposer>[0];

/**
 * The same mail compiled twice (one tree per build: building sets headers on the nodes), with a
 * fixed boundary, date and Message-ID. A function makes fresh options for each (a stream reads once).
 */
async function bothWays(options: MailOptions | (() => MailOptions)): Promise<{ ours: Buffer; nodemailers: Buffer }> {
  const fixed = () => ({ baseBoundary: "f1x3d", date: new Date(Date.UTC(2026, 10, 21, 9, 30)), messageId: "<m1@acme.example>", ...(typeof options === "function" ? options() : options) });
  const ours = await buildMime(new MailComposer(fixed()).compile());
  const nodemailers = await new MailComposer(fixed()).compile().build();
  return { ours, nodemailers };
}

const html = `<!doctype html><html><body><h1>Your order has shipped</h1>${"<p>Your parcel left our warehouse this morning and should arrive within two working days.</p>".repeat(12)}</body></html>`;
const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

/** Seeded, so that a failure reproduces. */
function randomText(seed: number, length: number): string {
  const alphabet = ["a", "b", " ", "\t", "\n", "\r\n", "\r", "=", ".", "é", "€", "😀", "x".repeat(90), " \n", "\u0000", "--", "<p>"];
  let state = seed;
  let text = "";
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    text += alphabet[state % alphabet.length];
  }
  return text;
}

describe("buildMime", () => {
  const corpus: Array<[string, MailOptions]> = [
    ["html and text (multipart/alternative)", { from: "Acme <hello@acme.example>", to: "ada@example.net", subject: "Shipped", html, text: "Your parcel left.\n" }],
    ["html alone", { from: "hello@acme.example", to: ["ada@example.net", "Bob <bob@example.net>"], subject: "Hi", html }],
    ["text alone, no final line break", { from: "hello@acme.example", to: "ada@example.net", subject: "Hi", text: "one line without an end" }],
    ["text ending in a lone CR", { from: "hello@acme.example", to: "ada@example.net", subject: "Hi", text: "line\r" }],
    ["non-ASCII everywhere (RFC 2047 words, quoted-printable or base64 bodies)", { from: "Zoë Ünal <zoe@acme.example>", to: "Jürgen <jurgen@bücher.example>", subject: "Привет — ваш заказ 📦", html: "<p>Grüße, 你好, 😀</p>", text: "Grüße, 你好, 😀\n" }],
    ["mostly non-ASCII text (base64 is shorter)", { from: "hello@acme.example", to: "ada@example.net", subject: "日本語", text: "日本語のテキスト。".repeat(40) }],
    ["lines longer than 76 and trailing whitespace", { from: "hello@acme.example", to: "ada@example.net", subject: "Long", text: `${"word ".repeat(60)}\nend with space \nand tab\t\n`, html: `<p>${"x".repeat(500)}</p>` }],
    ["attachments and an inline image (multipart/mixed and related)", {
      from: "hello@acme.example",
      to: "ada@example.net",
      subject: "Invoice",
      html: '<p>Logo: <img src="cid:logo@acme"></p>',
      text: "See the invoice.\n",
      attachments: [
        { filename: "invoice.pdf", content: Buffer.from("%PDF-1.4 fake body").toString("base64"), encoding: "base64", contentType: "application/pdf" },
        { filename: "logo.png", content: png, cid: "logo@acme", contentType: "image/png" },
        { filename: "notes.txt", content: "plain notes\r\nline two\n" },
      ],
    }],
    ["custom headers, reply-to, cc; bcc left out of the headers", { from: "hello@acme.example", to: "ada@example.net", cc: "c@example.net", bcc: "hidden@example.net", replyTo: "support@acme.example", subject: "Headers", text: "x", headers: { "X-Entity-Ref-ID": "123", "List-Unsubscribe": "<https://acme.example/u/1>" } }],
    ["an empty html part", { from: "hello@acme.example", to: "ada@example.net", subject: "Empty", html: "", text: "t" }],
    // nodemailer leaves this header value as it is; U+010A must not be cut down to a line feed.
    ["a header value nodemailer does not encode, with characters ending in the bytes of CR and LF", { from: "hello@acme.example", to: "ada@example.net", subject: "Token", text: "t", headers: { "OTP-Token": "x\u010d\u010aX-Injected: yes" } }],
  ];

  it.each(corpus)("makes the same bytes as nodemailer's build(): %s", async (_name, options) => {
    const { ours, nodemailers } = await bothWays(options);
    expect(ours.toString("latin1")).toBe(nodemailers.toString("latin1"));
    expect(ours.toString("latin1")).not.toMatch(/^X-Injected/m);
  });

  it("makes the same bytes as nodemailer's build() for random text and html bodies", async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const { ours, nodemailers } = await bothWays({ from: "hello@acme.example", to: "ada@example.net", subject: randomText(seed, 40).replace(/[\r\n\0]/g, " "), text: randomText(seed, 300 + seed * 17), html: randomText(seed + 1000, 200) });
      expect(ours.toString("latin1"), `seed ${seed}`).toBe(nodemailers.toString("latin1"));
    }
  });

  it("leaves content it does not assemble (a stream, a file) to nodemailer's build()", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mime-build-")), "report.csv");
    writeFileSync(file, "a,b\n1,2\n");
    const options = (): MailOptions => ({
      from: "hello@acme.example",
      to: "ada@example.net",
      subject: "Streams",
      text: "attached",
      attachments: [{ filename: "report.csv", path: file }, { filename: "live.txt", content: Readable.from(["streamed ", "text"]) }],
    });
    const { ours, nodemailers } = await bothWays(options);
    expect(ours.toString("latin1")).toBe(nodemailers.toString("latin1"));
    expect(ours.toString("latin1")).toContain(Buffer.from("a,b\n1,2\n").toString("base64"));
  });
});
