import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { deliveryStatusReport } from "../helpers/dsn.js";
import { RECIPIENT_DOMAIN, startLiveHarness, type LiveHarness } from "../helpers/live-delivery.js";
import type { SmtpReply } from "../helpers/smtp-sink.js";
import { swaks } from "../helpers/swaks.js";

const ada = `ada@${RECIPIENT_DOMAIN}`;
const grace = `grace@${RECIPIENT_DOMAIN}`;
const RETURN_PATH_DOMAIN = "bounces.acme.example";
const RETRY_WAIT_MS = 5 * 60 * 1000 * 1.2; // the first retry (RETRY_MIN_SECONDS=300) plus its jitter

/**
 * The fixtures' message id, VERP tag and recipient are those of the run that produced them
 * (test/fixtures/inbound/README.md); each test puts its own message's in their place, so the
 * MTA's report is otherwise byte for byte what Postfix wrote.
 */
function fixture(name: string, replace: { messageId: string; verp: string | null; recipient: string }): string {
  const raw = readFileSync(new URL(`../fixtures/inbound/${name}`, import.meta.url), "utf8");
  const fixtureId = /msg_[0-9a-z]{26}/.exec(raw)![0];
  const fixtureRecipient = /Final-Recipient: rfc822; ?(\S+)|Original-Rcpt-To: <([^>]+)>/.exec(raw)!.slice(1).find(Boolean)!;
  return raw
    .replaceAll(new RegExp(`bounces\\+${fixtureId}-\\d+-[0-9a-f]+@bounces\\.acme\\.example`, "g"), replace.verp ?? "hello@acme.example")
    .replaceAll(fixtureId, replace.messageId)
    .replaceAll(fixtureRecipient, replace.recipient);
}

/** An Exim DSN (multipart/report) for one failed recipient: a class-only `Status: 5.0.0`, the remote's words in the Diagnostic-Code. */
const eximDsn = (verp: string, diagnostic: string) =>
  deliveryStatusReport({
    from: "Mail Delivery System <Mailer-Daemon@relay.example.net>",
    to: verp,
    subject: "Mail delivery failed: returning message to sender",
    headers: ["Auto-Submitted: auto-replied"],
    reportingMta: "relay.example.net",
    recipient: ["Action: failed", `Final-Recipient: rfc822;${ada}`, "Status: 5.0.0", "Remote-MTA: dns; mx1.example.net", `Diagnostic-Code: smtp; ${diagnostic}`],
  });

describe.each(databases)("asynchronous bounces and complaints ($name)", (database) => {
  let h: LiveHarness;
  let smtp: string;
  afterEach(async () => h?.close());

  const start = async () => {
    h = await startLiveHarness(database, { env: () => ({ INBOUND_SMTP_PORT: "0" }) });
    smtp = `127.0.0.1:${(await h.t.runtime.startSmtp()).port}`;
  };
  /** A live message to `to`, delivered; returns its id and each recipient's VERP return path. */
  const delivered = async (to: string[]) => {
    const id = await h.send({ to });
    await h.t.drain();
    expect((await h.message(id)).status).toBe("delivered");
    const verp = new Map(h.sink.accepted.filter((m) => m.mailFrom.includes(id)).map((m) => [m.rcptTo[0]!, m.mailFrom]));
    return { id, verp };
  };
  /** Sends a report as its MTA does: from the null sender. */
  const report = (to: string, data: string) => swaks({ server: smtp, from: "", to, data, helo: "mx1.example.net" });
  const suppressions = async () => (await h.t.call({ method: "GET", url: "/v1/suppressions", key: h.t.workspace.liveKey })).json().data as Array<{ email: string; reason: string; message_id: string }>;

  it("turns Postfix's DSN for an unknown user into a hard bounce after delivery: message.bounced with the DSN's details, and a suppression", async () => {
    await start();
    const { id, verp } = await delivered([ada, grace]);
    const result = await report(verp.get(ada)!, fixture("postfix-unknown-user.eml", { messageId: id, verp: verp.get(ada)!, recipient: ada }));
    expect(result.transcript).toMatch(/MAIL FROM:<>/);
    expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: 1 bounce\(s\) recorded/);

    const message = await h.message(id);
    expect(message.recipients.map((r) => [r.email, r.status])).toEqual([
      [ada, "bounced"],
      [grace, "delivered"],
    ]);
    const bounced = (await h.events(id)).find((e) => e.type === "message.bounced")!;
    expect(bounced).toMatchObject({
      recipient: ada,
      data: { source: "dsn", bounce_type: "hard", enhanced_status: "5.1.1", diagnostic_code: 'X-Postfix; unknown user: "nosuchuser"', reporting_mta: "mx1.example.net" },
    });
    expect(await suppressions()).toEqual([expect.objectContaining({ email: ada, reason: "hard_bounce", message_id: id })]);
  });

  it("keeps a DSN that arrives while another recipient's retry is being handed off: the message ends bounced when both recipients have", async () => {
    await start();
    let retryReached!: () => void;
    const reached = new Promise<void>((resolve) => (retryReached = resolve));
    let answerRetry!: (reply: SmtpReply) => void;
    const retryAnswer = new Promise<SmtpReply>((resolve) => (answerRetry = resolve));
    h.sink.onRcpt((address, attempt) => {
      if (address !== grace) return undefined;
      if (attempt === 1) return { code: 451, message: "4.7.1 Greylisted, try again later" };
      retryReached();
      return retryAnswer;
    });
    const id = await h.send({ to: [ada, grace] });
    await h.t.drain();
    expect((await h.message(id)).recipients.map((r) => r.status)).toEqual(["delivered", "deferred"]);
    const verp = h.sink.accepted.find((m) => m.rcptTo.includes(ada))!.mailFrom;

    h.t.clock.advance(RETRY_WAIT_MS);
    const retrying = h.t.drain();
    await reached;
    // Grace's retry waits for the MX's answer to RCPT while ada's DSN is recorded.
    const result = await report(verp, fixture("postfix-unknown-user.eml", { messageId: id, verp, recipient: ada }));
    expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: 1 bounce\(s\) recorded/);
    answerRetry({ code: 550, message: "5.1.1 <grace@example.net>: Recipient address rejected: User unknown" });
    await retrying;

    const message = await h.message(id);
    expect(message.recipients.map((r) => [r.email, r.status])).toEqual([
      [ada, "bounced"],
      [grace, "bounced"],
    ]);
    expect(message.status).toBe("bounced");
  });

  /**
   * Sends to ada and grace and holds grace's first hand-off at RCPT TO; meanwhile ada's copy is
   * accepted and a DSN bounces her. Returns with the hand-off still held: `answerGrace` lets the
   * MX answer it, and `sending` is the worker's attempt.
   */
  async function dsnDuringFirstHandOff(): Promise<{ id: string; answerGrace: (reply: SmtpReply | undefined) => void; sending: Promise<unknown> }> {
    await start();
    let answerGrace!: (reply: SmtpReply | undefined) => void;
    const gracesAnswer = new Promise<SmtpReply | undefined>((resolve) => (answerGrace = resolve));
    h.sink.onRcpt((address) => (address === grace ? gracesAnswer : undefined));
    const id = await h.send({ to: [ada, grace] });
    const sending = h.t.drain();
    const verp = (await h.sink.waitFor(1))[0]!.mailFrom;
    const result = await report(verp, fixture("postfix-unknown-user.eml", { messageId: id, verp, recipient: ada }));
    expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: 1 bounce\(s\) recorded/);
    return { id, answerGrace, sending };
  }

  it("keeps a DSN that arrives during the message's first hand-off, about a recipient the MX already accepted: it ends bounced, not delivered", async () => {
    const { id, answerGrace, sending } = await dsnDuringFirstHandOff();
    answerGrace(undefined);
    await sending;

    const message = await h.message(id);
    expect(message.recipients.map((r) => [r.email, r.status])).toEqual([
      [ada, "bounced"],
      [grace, "delivered"],
    ]);
    const adasEvents = (await h.events(id)).filter((e) => e.recipient === ada);
    expect(adasEvents.map((e) => e.type)).toEqual(["message.bounced"]);
    expect(adasEvents[0]).toMatchObject({ from_status: "queued", to_status: "bounced", data: { source: "dsn", bounce_type: "hard" } });
    expect(await suppressions()).toEqual([expect.objectContaining({ email: ada, reason: "hard_bounce", message_id: id })]);
  });

  it("cancels what is left of a message whose first hand-off died after a DSN bounced one recipient: the message ends bounced, the other canceled", async () => {
    const { id, answerGrace, sending } = await dsnDuringFirstHandOff();
    // The worker is as good as dead: its lease runs out while grace's hand-off hangs, so the
    // stored message (ada bounced, grace queued, the message queued) may be canceled.
    h.t.clock.advance(10 * 60 * 1000);
    const canceled = await h.t.call({ method: "POST", url: `/v1/messages/${id}/cancel`, key: h.t.workspace.liveKey });
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(canceled.json()).toMatchObject({ status: "bounced" });
    expect(canceled.json().recipients.map((r: { email: string; status: string }) => [r.email, r.status])).toEqual([
      [ada, "bounced"],
      [grace, "canceled"],
    ]);
    expect((await h.events(id)).find((e) => e.type === "message.canceled")).toMatchObject({ from_status: "queued", to_status: "bounced", data: { recipients: [grace] } });
    answerGrace({ code: 451, message: "4.3.0 Try again later" });
    await sending;
    expect((await h.message(id)).status).toBe("bounced");
  });

  /**
   * Sends to ada and grace; grace is greylisted, and while her retry waits for the MX's answer at
   * RCPT TO, the report `dsn` (a fixture) bounces her; then the MX answers the retry with `answer`.
   * Returns once the retry is done, with grace's detail as the report left it.
   */
  async function dsnDuringRetry(dsn: string, answer: SmtpReply | undefined): Promise<{ id: string; detailAfterDsn: string | null }> {
    await start();
    let retryReached!: (verp: string) => void;
    const reached = new Promise<string>((resolve) => (retryReached = resolve));
    let answerRetry!: (reply: SmtpReply | undefined) => void;
    const retryAnswer = new Promise<SmtpReply | undefined>((resolve) => (answerRetry = resolve));
    h.sink.onRcpt((address, attempt, mailFrom) => {
      if (address !== grace) return undefined;
      if (attempt === 1) return { code: 451, message: "4.7.1 Greylisted, try again later" };
      retryReached(mailFrom);
      return retryAnswer;
    });
    const id = await h.send({ to: [ada, grace] });
    await h.t.drain();
    h.t.clock.advance(RETRY_WAIT_MS);
    const retrying = h.t.drain();
    const verp = await reached;
    const result = await report(verp, fixture(dsn, { messageId: id, verp, recipient: grace }));
    expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: 1 bounce\(s\) recorded/);
    const detailAfterDsn = (await h.message(id)).recipients.find((r) => r.email === grace)!.detail;
    answerRetry(answer);
    await retrying;
    const message = await h.message(id);
    expect(message.recipients.map((r) => [r.email, r.status])).toEqual([
      [ada, "delivered"],
      [grace, "bounced"],
    ]);
    expect(await h.t.runtime.db.knex("jobs").where({ message_id: id }).count({ n: "*" }).first()).toMatchObject({ n: 0 });
    return { id, detailAfterDsn };
  }

  it("keeps a DSN that bounces a recipient while its own retry is being handed off: the retry's answer does not overwrite it", async () => {
    // The MX says 250 after all.
    const { id } = await dsnDuringRetry("postfix-unknown-user.eml", undefined);
    const gracesEvents = (await h.events(id)).filter((e) => e.recipient === grace).map((e) => e.type);
    expect(gracesEvents).not.toContain("message.delivered");
    expect(gracesEvents.at(-1)).toBe("message.bounced");
  });

  it("keeps a soft DSN bounce that arrives while the recipient's own retry is refused too: one message.bounced, the DSN's detail, no suppression", async () => {
    const { id, detailAfterDsn } = await dsnDuringRetry("postfix-mailbox-full.eml", { code: 550, message: "5.1.1 <grace@example.net>: Recipient address rejected: User unknown" });
    expect((await h.message(id)).recipients.find((r) => r.email === grace)!.detail).toBe(detailAfterDsn);
    const bounces = (await h.events(id)).filter((e) => e.type === "message.bounced");
    expect(bounces).toHaveLength(1);
    expect(bounces[0]).toMatchObject({ recipient: grace, from_status: "deferred", data: { source: "dsn", bounce_type: "soft", enhanced_status: "5.2.2" } });
    expect(await suppressions()).toEqual([]);
  });

  it("turns Postfix's DSN for a remote 552 5.2.2 (mailbox full) into a soft bounce, without suppressing the address", async () => {
    await start();
    const { id, verp } = await delivered([ada]);
    const result = await report(verp.get(ada)!, fixture("postfix-mailbox-full.eml", { messageId: id, verp: verp.get(ada)!, recipient: ada }));
    expect(result.last, result.transcript).toMatch(/^250 /);
    expect((await h.message(id)).status).toBe("bounced");
    expect((await h.events(id)).find((e) => e.type === "message.bounced")).toMatchObject({ recipient: ada, data: { bounce_type: "soft", enhanced_status: "5.2.2", remote_mta: "127.0.0.1" } });
    expect(await suppressions()).toEqual([]);
  });

  it("accepts Postfix's delay warning and changes nothing", async () => {
    await start();
    const { id, verp } = await delivered([ada]);
    const result = await report(verp.get(ada)!, fixture("postfix-delayed.eml", { messageId: id, verp: verp.get(ada)!, recipient: ada }));
    expect(result.last, result.transcript).toMatch(/^250 /);
    expect((await h.events(id)).map((e) => e.type)).toEqual(["message.queued", "message.delivered"]);
    expect((await h.message(id)).status).toBe("delivered");
  });

  describe("a report at the plain bounces mailbox, found by the Message-ID it quotes", () => {
    /** The reporting MTA's HELO name passes SPF (the null sender's identity, RFC 7208 §2.4). */
    const spfForHelo = (helo: string) => h.dns.add(helo, { type: "TXT", value: "v=spf1 ip4:127.0.0.1 -all" });

    it("believes a DSN authenticated by the recipient's organisation: the reporting MTA's HELO name passes SPF", async () => {
      await start();
      spfForHelo(`mx1.${RECIPIENT_DOMAIN}`);
      const { id } = await delivered([ada, grace]);
      const result = await report(`bounces@${RETURN_PATH_DOMAIN}`, fixture("postfix-unknown-user.eml", { messageId: id, verp: null, recipient: grace }));
      expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: 1 bounce\(s\) recorded/);
      expect((await h.events(id)).find((e) => e.type === "message.bounced")).toMatchObject({ recipient: grace, data: { bounce_type: "hard" } });
      expect(await suppressions()).toEqual([expect.objectContaining({ email: grace, reason: "hard_bounce" })]);
    });

    it("answers 451 4.4.3 while the DNS of the recipient's organisation fails (SERVFAIL), so the MTA retries, and records the retry", async () => {
      await start();
      const { id } = await delivered([ada, grace]);
      const dsn = fixture("postfix-unknown-user.eml", { messageId: id, verp: null, recipient: grace });
      h.dns.fail(`mx1.${RECIPIENT_DOMAIN}`, "SERVFAIL");
      const first = await report(`bounces@${RETURN_PATH_DOMAIN}`, dsn);
      expect(first.last, first.transcript).toMatch(/^451 4\.4\.3 /);
      expect((await h.message(id)).status).toBe("delivered");
      expect(await suppressions()).toEqual([]);
      expect((await h.t.runtime.metrics.inboundMessages.get()).values.map((v) => [v.labels.outcome, v.value])).toEqual([["deferred", 1]]);

      h.dns.fail(`mx1.${RECIPIENT_DOMAIN}`, "SERVFAIL", 0); // answering again
      spfForHelo(`mx1.${RECIPIENT_DOMAIN}`);
      const retry = await report(`bounces@${RETURN_PATH_DOMAIN}`, dsn);
      expect(retry.last, retry.transcript).toMatch(/^250 2\.0\.0 Ok: 1 bounce\(s\) recorded/);
      expect(await suppressions()).toEqual([expect.objectContaining({ email: grace, reason: "hard_bounce" })]);
    });

    it("ignores one that nothing authenticates, as a co-recipient's forgery would be: accepted, nothing recorded or suppressed", async () => {
      await start();
      const { id } = await delivered([ada, grace]);
      // Ada knows the Message-ID and grace's address from her own copy.
      const forged = await swaks({ server: smtp, from: "", to: `bounces@${RETURN_PATH_DOMAIN}`, helo: "laptop.local", data: fixture("postfix-unknown-user.eml", { messageId: id, verp: null, recipient: grace }) });
      expect(forged.last, forged.transcript).toMatch(/^250 2\.0\.0 Ok: report noted/);
      expect((await h.message(id)).recipients.map((r: { status: string }) => r.status)).toEqual(["delivered", "delivered"]);
      expect(await suppressions()).toEqual([]);
    });

    it("ignores one authenticated by another organisation than the recipient's", async () => {
      await start();
      spfForHelo("mx.attacker.example");
      const { id } = await delivered([ada, grace]);
      const result = await swaks({ server: smtp, from: "", to: `bounces@${RETURN_PATH_DOMAIN}`, helo: "mx.attacker.example", data: fixture("postfix-unknown-user.eml", { messageId: id, verp: null, recipient: grace }) });
      expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: report noted/);
      expect((await h.message(id)).status).toBe("delivered");
      expect(await suppressions()).toEqual([]);
    });

    it("ignores a DSN that a co-recipient sends from her own mailbox, though SPF passes for the recipient's domain: a DSN comes from the null sender", async () => {
      await start();
      h.dns.add(RECIPIENT_DOMAIN, { type: "TXT", value: "v=spf1 ip4:127.0.0.1 -all" });
      const { id } = await delivered([ada, grace]);
      // example.net's SPF passes for mail from any of its users, Ada's own included; she knows the Message-ID from her copy.
      const dsn = fixture("postfix-unknown-user.eml", { messageId: id, verp: null, recipient: grace });
      const forged = await swaks({ server: smtp, from: ada, to: `bounces@${RETURN_PATH_DOMAIN}`, helo: `mx1.${RECIPIENT_DOMAIN}`, data: dsn });
      expect(forged.last, forged.transcript).toMatch(/^250 2\.0\.0 Ok: report noted/);
      expect((await h.message(id)).recipients.map((r: { status: string }) => r.status)).toEqual(["delivered", "delivered"]);
      expect(await suppressions()).toEqual([]);
    });

    it("ignores a complaint from any real sender, though SPF passes for the recipient's domain: a co-recipient's own mailbox, or another at her provider", async () => {
      await start();
      h.dns.add(RECIPIENT_DOMAIN, { type: "TXT", value: "v=spf1 ip4:127.0.0.1 -all" });
      const { id } = await delivered([ada, grace]);
      // A report that quotes no return path (some feedback loops strip it): only the Message-ID and Original-Rcpt-To say whom it is about.
      const complaint = fixture("arf-abuse.eml", { messageId: id, verp: null, recipient: grace });
      expect(complaint).not.toMatch(/bounces\+/);
      // Any account at grace's provider sends as authenticated as its feedback address does.
      for (const from of ["ada@laptop.local", ada, `fbl@${RECIPIENT_DOMAIN}`]) {
        const forged = await swaks({ server: smtp, from, to: `complaints@${RETURN_PATH_DOMAIN}`, data: complaint });
        expect(forged.last, `${from}\n${forged.transcript}`).toMatch(/^250 2\.0\.0 Ok: report noted/);
      }
      expect((await h.events(id)).some((e) => e.type === "message.complained")).toBe(false);
      expect(await suppressions()).toEqual([]);
    });

    it("believes a complaint from the null sender authenticated by the recipient's organisation, as it believes a DSN", async () => {
      await start();
      spfForHelo(`fbl.${RECIPIENT_DOMAIN}`);
      const { id } = await delivered([ada, grace]);
      const complaint = fixture("arf-abuse.eml", { messageId: id, verp: null, recipient: grace });
      const genuine = await swaks({ server: smtp, from: "", to: `complaints@${RETURN_PATH_DOMAIN}`, helo: `fbl.${RECIPIENT_DOMAIN}`, data: complaint });
      expect(genuine.last, genuine.transcript).toMatch(/^250 2\.0\.0 Ok: complaint recorded/);
      expect((await h.events(id)).find((e) => e.type === "message.complained")?.recipient).toBe(grace);
      expect(await suppressions()).toEqual([expect.objectContaining({ email: grace, reason: "complaint" })]);
    });
  });

  it("ignores a DSN quoting another workspace's message: the report is accepted and nothing changes", async () => {
    await start();
    const { id } = await delivered([ada]);
    // The other workspace has a domain of its own, so its return-path domain reaches this server.
    const principal = { workspaceId: h.t.other.id, environment: "live" as const, credential: { kind: "api_key" as const, id: "test", permission: "full_access" as const } };
    await h.t.runtime.services.domains.create(principal, { name: "globex.example" });
    const result = await report(`bounces@bounces.globex.example`, fixture("postfix-unknown-user.eml", { messageId: id, verp: null, recipient: ada }));
    expect(result.last, result.transcript).toMatch(/^250 /);
    expect((await h.message(id)).status).toBe("delivered");
    expect(await suppressions()).toEqual([]);
  });

  it("refuses a bounce address whose VERP tag is forged (550 5.1.1), and suppresses nothing", async () => {
    await start();
    const { id, verp } = await delivered([ada]);
    const genuine = verp.get(ada)!;
    const forged = genuine.replace(/-0-([0-9a-f]{10})@/, "-0-0000000000@");
    const otherPosition = genuine.replace(/-0-([0-9a-f]{10})@/, "-1-$1@");
    for (const to of [forged, otherPosition]) {
      const result = await report(to, fixture("postfix-unknown-user.eml", { messageId: id, verp: to, recipient: ada }));
      expect(result.last, result.transcript).toMatch(/^550 5\.1\.1 /);
    }
    expect((await h.message(id)).status).toBe("delivered");
    expect(await suppressions()).toEqual([]);
  });

  it("reads a null-sender bounce that is no RFC 3464 report at a VERP address: hard when it quotes 5.1.1, soft with the status it quotes when that is 4.x.x, soft when it quotes no status", async () => {
    await start();
    const carol = `carol@${RECIPIENT_DOMAIN}`;
    const { id, verp } = await delivered([ada, grace, carol]);
    const notice = (to: string, text: string) =>
      ["From: MAILER-DAEMON@mx.example.net", `To: ${to}`, "Subject: failure notice", "", "Hi. This is the qmail-send program.", text, ""].join("\r\n");
    expect((await report(verp.get(ada)!, notice(verp.get(ada)!, "<ada@example.net>: 550 5.1.1 sorry, no mailbox here by that name"))).last).toMatch(/^250 /);
    expect((await report(verp.get(grace)!, notice(verp.get(grace)!, "I could not deliver your message. Sorry."))).last).toMatch(/^250 /);
    expect((await report(verp.get(carol)!, notice(verp.get(carol)!, "<carol@example.net>: 452 4.2.2 mailbox full; giving up after 5 days"))).last).toMatch(/^250 /);
    const bounces = (await h.events(id)).filter((e) => e.type === "message.bounced");
    expect(bounces.map((e) => [e.recipient, e.data.source, e.data.bounce_type, e.data.enhanced_status])).toEqual([
      [ada, "unstructured", "hard", "5.1.1"],
      [grace, "unstructured", "soft", "5.0.0"],
      [carol, "unstructured", "soft", "4.2.2"],
    ]);
    expect((await suppressions()).map((s) => s.email)).toEqual([ada]);
  });

  it("ignores an out-of-office reply from the null sender at a VERP address (RFC 3834 Auto-Submitted): no bounce, the recipient stays delivered", async () => {
    await start();
    const { id, verp } = await delivered([ada]);
    const outOfOffice = [`From: Ada <${ada}>`, `To: ${verp.get(ada)!}`, "Subject: Out of office: Your receipt", "Auto-Submitted: auto-replied", "", "I am out of the office until Monday.", ""].join("\r\n");
    const result = await report(verp.get(ada)!, outOfOffice);
    expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: auto-reply ignored/);
    expect((await h.events(id)).map((e) => e.type)).toEqual(["message.queued", "message.delivered"]);
    expect((await h.message(id)).recipients.map((r) => r.status)).toEqual(["delivered"]);
  });

  it("reads a DSN whose Status gives only the class (Exim's 5.0.0) by the Diagnostic-Code's status: a spam refusal is soft and suppresses nothing", async () => {
    await start();
    const { id, verp } = await delivered([ada]);
    const result = await report(verp.get(ada)!, eximDsn(verp.get(ada)!, "550 5.7.1 Message rejected as spam by content filter"));
    expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: 1 bounce\(s\) recorded/);
    expect((await h.events(id)).find((e) => e.type === "message.bounced")).toMatchObject({ recipient: ada, data: { source: "dsn", bounce_type: "soft", enhanced_status: "5.7.1" } });
    expect(await suppressions()).toEqual([]);
  });

  it("keeps a DSN's Diagnostic-Code folded over thousands of lines to its start, and records the bounce", async () => {
    await start();
    const { id, verp } = await delivered([ada]);
    const folded = Array.from({ length: 3000 }, (_, i) => `\r\n  line ${i} of what the remote server said`).join("");
    const result = await report(verp.get(ada)!, eximDsn(verp.get(ada)!, `550 5.1.1 User unknown${folded}`));
    expect(result.last, result.last).toMatch(/^250 2\.0\.0 Ok: 1 bounce\(s\) recorded/);
    const bounced = (await h.events(id)).find((e) => e.type === "message.bounced")!;
    expect(bounced).toMatchObject({ recipient: ada, data: { bounce_type: "hard", enhanced_status: "5.1.1", diagnostic_code: expect.stringMatching(/^smtp; 550 5\.1\.1 User unknown line 0 /) } });
    expect((bounced.data.diagnostic_code as string).length).toBe(1000);
    expect((await suppressions()).map((s) => s.email)).toEqual([ada]);
  });

  it("ignores mail from a real sender to a VERP address (an auto-reply sent to the return path)", async () => {
    await start();
    const { id, verp } = await delivered([ada]);
    const result = await swaks({ server: smtp, from: ada, to: verp.get(ada)!, body: "I am out of the office until Monday." });
    expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: ignored/);
    expect((await h.events(id)).map((e) => e.type)).toEqual(["message.queued", "message.delivered"]);
  });

  describe("complaints", () => {
    it("takes a report sent to the recipient's VERP return path too", async () => {
      await start();
      const { id, verp } = await delivered([ada, grace]);
      const result = await swaks({ server: smtp, from: "fbl@feedback.mailbox.example", to: verp.get(ada)!, data: fixture("arf-abuse.eml", { messageId: id, verp: verp.get(ada)!, recipient: ada }) });
      expect(result.last, result.transcript).toMatch(/^250 /);
      expect((await h.events(id)).find((e) => e.type === "message.complained")?.recipient).toBe(ada);
    });

    it("accepts a not-spam report and records nothing", async () => {
      await start();
      const { id, verp } = await delivered([ada]);
      const notSpam = fixture("arf-abuse.eml", { messageId: id, verp: verp.get(ada)!, recipient: ada }).replace("Feedback-Type: abuse", "Feedback-Type: not-spam");
      const result = await swaks({ server: smtp, from: "fbl@feedback.mailbox.example", to: `complaints@${RETURN_PATH_DOMAIN}`, data: notSpam });
      expect(result.last, result.transcript).toMatch(/^250 /);
      expect((await h.events(id)).some((e) => e.type === "message.complained")).toBe(false);
      expect(await suppressions()).toEqual([]);
    });

    it("turns an ARF abuse report at complaints@ into message.complained, marks the recipient and suppresses it", async () => {
      await start();
      const { id, verp } = await delivered([ada, grace]);
      const result = await swaks({ server: smtp, from: "fbl@feedback.mailbox.example", to: `complaints@${RETURN_PATH_DOMAIN}`, data: fixture("arf-abuse.eml", { messageId: id, verp: verp.get(grace)!, recipient: grace }) });
      expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: complaint recorded/);
      const complaint = (await h.events(id)).find((e) => e.type === "message.complained")!;
      expect(complaint.recipient).toBe(grace);
      // Exactly these fields: the sandbox's complained@simulator.test and testWebhook's sample carry the same (sandbox.test.ts).
      expect(complaint.data).toEqual({ feedback_type: "abuse", user_agent: "ExampleFBL/2.1", reporting_mta: "mail.feedback.mailbox.example", source_ip: "192.0.2.25" });
      expect((await h.message(id)).recipients.find((r) => r.email === grace)).toMatchObject({ complained_at: expect.any(String) });
      expect(await suppressions()).toEqual([expect.objectContaining({ email: grace, reason: "complaint" })]);

      // A second report about the same message and recipient records nothing new.
      await swaks({ server: smtp, from: "fbl@feedback.mailbox.example", to: `complaints@${RETURN_PATH_DOMAIN}`, data: fixture("arf-abuse.eml", { messageId: id, verp: verp.get(grace)!, recipient: grace }) });
      expect((await h.events(id)).filter((e) => e.type === "message.complained")).toHaveLength(1);
    });

    it("takes a report that quotes the original whole and inline (message/rfc822, as RFC 5965 B.1 does), finding the recipient by the return path in it", async () => {
      await start();
      const { id, verp } = await delivered([ada, grace]);
      // B.1's shape: no Original-Mail-From or Original-Rcpt-To, the original as an inline message/rfc822 part.
      const inline = fixture("arf-abuse.eml", { messageId: id, verp: verp.get(grace)!, recipient: grace })
        .split("\r\n")
        .filter((line) => !/^Original-(Mail-From|Rcpt-To):/.test(line))
        .join("\r\n")
        .replace("Content-Type: text/rfc822-headers\r\n", "Content-Type: message/rfc822\r\nContent-Disposition: inline\r\n")
        .replace("MIME-Version: 1.0\r\n\r\n--part1", "MIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nYour receipt.\r\n\r\n--part1");
      expect(inline).toMatch(/Content-Disposition: inline\r\n\r\nReturn-Path: <bounces\+/);
      expect(inline).not.toMatch(/Original-(Mail-From|Rcpt-To)/);
      const result = await swaks({ server: smtp, from: "fbl@feedback.mailbox.example", to: `complaints@${RETURN_PATH_DOMAIN}`, data: inline });
      expect(result.last, result.transcript).toMatch(/^250 2\.0\.0 Ok: complaint recorded/);
      expect((await h.events(id)).find((e) => e.type === "message.complained")).toMatchObject({ recipient: grace, data: { feedback_type: "abuse" } });
      expect(await suppressions()).toEqual([expect.objectContaining({ email: grace, reason: "complaint" })]);
    });

    it("finds the recipient of a redacted report (no Original-Rcpt-To, no To) through the VERP return path it quotes", async () => {
      await start();
      const { id, verp } = await delivered([ada, grace]);
      const redacted = fixture("arf-abuse.eml", { messageId: id, verp: verp.get(ada)!, recipient: ada })
        .split("\r\n")
        .filter((line) => !/^(Original-Rcpt-To|To): .*ada@/.test(line))
        .join("\r\n")
        .replace(/\tfor <ada@example\.net>;/, "\tfor <redacted@example.net>;");
      expect(redacted).not.toContain(ada);
      const result = await swaks({ server: smtp, from: "fbl@feedback.mailbox.example", to: `complaints@${RETURN_PATH_DOMAIN}`, data: redacted });
      expect(result.last, result.transcript).toMatch(/^250 /);
      expect((await h.events(id)).find((e) => e.type === "message.complained")?.recipient).toBe(ada);
    });
  });
});
