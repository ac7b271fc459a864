import { generateKeyPairSync } from "node:crypto";
import { promises as dns } from "node:dns";
import { simpleParser } from "mailparser";
import nodemailer from "nodemailer";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { mailauthSignatures } from "../helpers/dkim-signers.js";
import { verifyDkim } from "../helpers/dkim-verify.js";
import { startDnsServer, type DnsServer } from "../helpers/dns-server.js";
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from "../helpers/smtp-sink.js";

// The live-delivery tests stand on these helpers; this file is the proof that they behave like
// the real DNS, a real MX and a real DKIM verifier would.

/** The error code Node's resolver gives, or the answer when there is none. */
const outcome = <T>(lookup: Promise<T>): Promise<T | string> => lookup.catch((error: NodeJS.ErrnoException) => error.code ?? String(error));

describe("DNS server", () => {
  let server: DnsServer;
  let resolver: dns.Resolver;
  beforeEach(async () => {
    server = await startDnsServer();
    resolver = new dns.Resolver({ timeout: 500, tries: 1 });
    resolver.setServers([server.address]);
  });
  afterEach(async () => server.close());

  it("answers MX, A, AAAA and TXT records as published, whatever the case of the name", async () => {
    server.add("example.com.", { type: "MX", priority: 10, exchange: "mx1.example.com" });
    server.add("Example.COM", { type: "MX", priority: 20, exchange: "mx2.example.com" });
    server.add("example.com", { type: "TXT", value: "v=spf1 -all" });
    server.set("mx1.example.com", [
      { type: "A", address: "127.0.0.1" },
      { type: "AAAA", address: "::1" },
    ]);

    expect(await resolver.resolveMx("EXAMPLE.com")).toEqual([
      { exchange: "mx1.example.com", priority: 10 },
      { exchange: "mx2.example.com", priority: 20 },
    ]);
    expect(await resolver.resolveTxt("example.com")).toEqual([["v=spf1 -all"]]);
    expect(await resolver.resolve4("mx1.example.com")).toEqual(["127.0.0.1"]);
    expect(await resolver.resolve6("mx1.example.com")).toEqual(["::1"]);
    expect(server.queries).toEqual([
      { name: "example.com", type: "MX" },
      { name: "example.com", type: "TXT" },
      { name: "mx1.example.com", type: "A" },
      { name: "mx1.example.com", type: "AAAA" },
    ]);
  });

  it("splits a TXT value longer than 255 bytes into strings that the resolver joins back", async () => {
    // An RSA-2048 DKIM key record is about this long.
    const dkimKey = `v=DKIM1; k=rsa; p=${"A".repeat(392)}`;
    server.add("sel._domainkey.example.com", { type: "TXT", value: dkimKey });

    const [record] = await resolver.resolveTxt("sel._domainkey.example.com");
    expect(dkimKey).toHaveLength(410);
    expect(record).toHaveLength(2);
    expect(record!.join("")).toBe(dkimKey);
  });

  it("answers over TCP when the answer is too large for UDP", async () => {
    const huge = "x".repeat(5000);
    server.add("huge.example", { type: "TXT", value: huge });

    const [record] = await resolver.resolveTxt("huge.example");
    expect(record!.join("")).toBe(huge);
    // Once over UDP (answered truncated), once again over TCP.
    expect(server.queries).toEqual([
      { name: "huge.example", type: "TXT" },
      { name: "huge.example", type: "TXT" },
    ]);
  });

  it("answers a null MX (RFC 7505) as an MX with an empty exchange", async () => {
    server.add("no-mail.example", { type: "MX", priority: 0, exchange: "." });
    expect(await resolver.resolveMx("no-mail.example")).toEqual([{ exchange: "", priority: 0 }]);
  });

  it("follows a CNAME to the records of its target", async () => {
    server.add("mail.example.com", { type: "CNAME", target: "host.example.net" });
    server.add("host.example.net", { type: "A", address: "127.0.0.2" });
    expect(await resolver.resolve4("mail.example.com")).toEqual(["127.0.0.2"]);
  });

  it("answers NXDOMAIN (ENOTFOUND) for an unknown name and NODATA (ENODATA) for a missing type", async () => {
    server.add("example.com", { type: "TXT", value: "v=spf1 -all" });
    expect(await outcome(resolver.resolveMx("unknown.example"))).toBe("ENOTFOUND");
    expect(await outcome(resolver.resolveMx("example.com"))).toBe("ENODATA");
    expect(await outcome(resolver.resolve4("example.com"))).toBe("ENODATA");
  });

  it("fails a name the given number of times (ESERVFAIL), then answers again", async () => {
    server.add("example.com", { type: "MX", priority: 10, exchange: "mx.example.com" });
    server.fail("example.com", "SERVFAIL", 1);

    expect(await outcome(resolver.resolveMx("example.com"))).toBe("ESERVFAIL");
    expect(await resolver.resolveMx("example.com")).toEqual([{ exchange: "mx.example.com", priority: 10 }]);
  });

  it("fails a name until set() clears it, with the rcode asked for", async () => {
    server.add("example.com", { type: "MX", priority: 10, exchange: "mx.example.com" });
    server.fail("example.com", "REFUSED");
    expect(await outcome(resolver.resolveMx("example.com"))).toBe("EREFUSED");
    expect(await outcome(resolver.resolveMx("example.com"))).toBe("EREFUSED");
    server.fail("example.com", "NXDOMAIN");
    expect(await outcome(resolver.resolveMx("example.com"))).toBe("ENOTFOUND");

    server.set("example.com", [{ type: "MX", priority: 5, exchange: "mx.example.com" }]);
    expect(await resolver.resolveMx("example.com")).toEqual([{ exchange: "mx.example.com", priority: 5 }]);
  });

  it("serves a change at once: the resolver does not cache what it was told", async () => {
    expect(await outcome(resolver.resolve4("later.example"))).toBe("ENOTFOUND");
    server.add("later.example", { type: "A", address: "127.0.0.3" });
    expect(await resolver.resolve4("later.example")).toEqual(["127.0.0.3"]);
    server.set("later.example", [{ type: "A", address: "127.0.0.4" }]);
    expect(await resolver.resolve4("later.example")).toEqual(["127.0.0.4"]);
    server.remove("later.example");
    expect(await outcome(resolver.resolve4("later.example"))).toBe("ENOTFOUND");
  });
});

describe("SMTP sink", () => {
  let sink: SmtpSink;
  const start = async (options?: SmtpSinkOptions) => {
    sink = await startSmtpSink(options);
    return sink;
  };
  afterEach(async () => sink?.close());

  const transport = (options: { secure?: boolean; auth?: { user: string; pass: string } } = {}) =>
    nodemailer.createTransport({ host: sink.host, port: sink.port, tls: { rejectUnauthorized: false }, ...options });
  const mail = (to: string | string[] = "ada@example.net") => ({ from: "sender@example.com", to, subject: "Hello", text: "Hello, Ada." });

  it("receives a message over STARTTLS", async () => {
    await start();
    const info = await transport().sendMail(mail());
    expect(info.response).toMatch(/^250 /);

    const [received] = await sink.waitFor(1);
    expect(received).toMatchObject({ mailFrom: "sender@example.com", rcptTo: ["ada@example.net"], secure: true, user: null });
    expect((await simpleParser(received!.raw)).subject).toBe("Hello");
    expect(sink.messages).toEqual(sink.accepted);
  });

  it("receives in cleartext when STARTTLS is not offered, and over implicit TLS", async () => {
    await start({ starttls: false });
    await transport().sendMail(mail());
    expect(sink.accepted[0]!.secure).toBe(false);
    await sink.close();

    await start({ secure: true });
    await transport({ secure: true }).sendMail(mail());
    expect(sink.accepted[0]!.secure).toBe(true);
  });

  it("answers RCPT as scripted, counting attempts per address", async () => {
    await start();
    sink.onRcpt((address, attempt) => {
      if (address === "nobody@example.net") return { code: 550, message: "5.1.1 No such user" };
      if (address === "grey@example.net" && attempt === 1) return { code: 451, message: "4.7.1 Greylisted, try again later" };
      return undefined;
    });

    const partial = await transport().sendMail(mail(["ada@example.net", "nobody@example.net"]));
    expect(partial.accepted).toEqual(["ada@example.net"]);
    expect(partial.rejected).toEqual(["nobody@example.net"]);
    expect(partial.rejectedErrors).toMatchObject([{ responseCode: 550, response: "550 5.1.1 No such user" }]);

    await expect(transport().sendMail(mail("grey@example.net"))).rejects.toMatchObject({ responseCode: 451, response: "451 4.7.1 Greylisted, try again later" });
    await transport().sendMail(mail("grey@example.net"));
    expect(sink.accepted.map((m) => m.rcptTo)).toEqual([["ada@example.net"], ["grey@example.net"]]);
  });

  it("answers DATA as scripted and still records the message", async () => {
    await start();
    sink.onData((_mail, attempt) => (attempt === 1 ? { code: 451, message: "4.3.0 Try again later" } : undefined));

    await expect(transport().sendMail(mail())).rejects.toMatchObject({ responseCode: 451, response: "451 4.3.0 Try again later" });
    expect(sink.messages).toHaveLength(1);
    expect(sink.accepted).toHaveLength(0);

    await transport().sendMail(mail());
    expect(sink.messages).toHaveLength(2);
    expect(sink.accepted).toEqual([sink.messages[1]]);
  });

  it('"drop" cuts the connection after the whole message arrived, with no reply (RFC 1047)', async () => {
    await start();
    sink.onData(() => "drop");

    const error = await transport().sendMail(mail()).then(
      () => null,
      (error: Error & { code?: string }) => error,
    );
    expect(error).toMatchObject({ code: "ECONNECTION" });
    expect(error?.message).toMatch(/closed/i);
    expect(sink.messages).toHaveLength(1);
    expect((await simpleParser(sink.messages[0]!.raw)).text?.trim()).toBe("Hello, Ada.");
    expect(sink.accepted).toHaveLength(0);
  });

  it("requires AUTH in relay mode: refuses without credentials or with wrong ones, accepts with them", async () => {
    await start({ auth: { user: "relay-user", pass: "relay-pass" } });

    await expect(transport().sendMail(mail())).rejects.toMatchObject({ responseCode: 530 });
    await expect(transport({ auth: { user: "relay-user", pass: "wrong" } }).sendMail(mail())).rejects.toMatchObject({ code: "EAUTH", responseCode: 535 });
    expect(sink.messages).toHaveLength(0);

    await transport({ auth: { user: "relay-user", pass: "relay-pass" } }).sendMail(mail());
    expect(sink.accepted).toMatchObject([{ user: "relay-user", secure: true }]);
  });

  it("counts connections, concurrent ones included", async () => {
    await start();
    await Promise.all([transport().sendMail(mail()), transport().sendMail(mail())]);
    // nodemailer resolves on the 250 and closes its connection after that.
    await vi.waitFor(() => expect(sink.stats.openConnections).toBe(0));
    await transport().sendMail(mail());

    expect(sink.stats.connections).toBe(3);
    expect(sink.stats.maxConcurrentConnections).toBe(2);
    await vi.waitFor(() => expect(sink.stats.openConnections).toBe(0));
  });

  it("waitFor says how many messages arrived when too few did", async () => {
    await start();
    sink.onData(() => ({ code: 554, message: "5.7.1 Rejected" }));
    await transport().sendMail(mail()).catch(() => undefined);

    await expect(sink.waitFor(1, 100)).rejects.toThrow("expected 1 accepted message(s) within 100 ms, but 0 were accepted (1 received in all)");
  });
});

describe("verifyDkim", () => {
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const ed25519 = generateKeyPairSync("ed25519");
  const spki = (key: typeof rsa.publicKey) => key.export({ type: "spki", format: "der" });
  const txtRecords = {
    "rsa._domainkey.example.com": `v=DKIM1; k=rsa; p=${spki(rsa.publicKey).toString("base64")}`,
    // RFC 8463 §4.2: p= is the raw 32-byte key, which ends the DER SubjectPublicKeyInfo.
    "ed._domainkey.example.com": `v=DKIM1; k=ed25519; p=${spki(ed25519.publicKey).subarray(-32).toString("base64")}`,
  };
  const pem = (key: typeof rsa.privateKey) => key.export({ type: "pkcs8", format: "pem" }) as string;

  const message = [
    "From: Sender <sender@example.com>",
    "To: Ada <ada@example.net>",
    "Subject: Signed",
    "Date: Fri, 20 Nov 2026 12:00:00 +0000",
    "Message-ID: <signed-1@example.com>",
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "",
    "Hello, Ada.",
    "",
  ].join("\r\n");

  /** The message with the DKIM-Signature headers mailauth makes for it prepended (t= fixed: see mailauthSignatures). */
  const signed = async (raw: string) =>
    (await mailauthSignatures(raw, [
      { signingDomain: "example.com", selector: "rsa", privateKey: pem(rsa.privateKey), algorithm: "rsa-sha256" },
      { signingDomain: "example.com", selector: "ed", privateKey: pem(ed25519.privateKey), algorithm: "ed25519-sha256" },
    ])) + raw;

  it("verifies every signature of a message signed by mailauth, RSA-2048 and Ed25519", async () => {
    const results = await verifyDkim(await signed(message), txtRecords);
    expect(results).toEqual([
      { domain: "example.com", selector: "rsa", algorithm: "rsa-sha256", valid: true, error: null },
      { domain: "example.com", selector: "ed", algorithm: "ed25519-sha256", valid: true, error: null },
    ]);
  });

  it("finds both signatures invalid when the body changed after signing", async () => {
    const tampered = (await signed(message)).replace("Hello, Ada.", "Hello, Eve.");
    const results = await verifyDkim(Buffer.from(tampered), txtRecords);
    expect(results.map((r) => [r.selector, r.valid])).toEqual([
      ["rsa", false],
      ["ed", false],
    ]);
    for (const result of results) expect(result.error).toMatch(/body hash/);
  });

  it("finds a signature invalid when its key is not published, and nothing in an unsigned message", async () => {
    const results = await verifyDkim(await signed(message), { "rsa._domainkey.example.com": txtRecords["rsa._domainkey.example.com"] });
    expect(results.map((r) => [r.selector, r.valid])).toEqual([
      ["rsa", true],
      ["ed", false],
    ]);
    expect(await verifyDkim(message, txtRecords)).toEqual([]);
  });
});
