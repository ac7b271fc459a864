import { dkimVerify } from "mailauth/lib/dkim/verify.js";
import { simpleParser } from "mailparser";
import { afterEach, describe, expect, it } from "vitest";
import type { MessageRecord } from "../../src/db/repositories/messages.js";
import { composeMessage, type ComposeRequest } from "../../src/delivery/compose.js";
import { ComposeThreads } from "../../src/delivery/compose-threads.js";
import type { DkimSigner } from "../../src/delivery/dkim.js";
import { dkimTestKeys } from "../helpers/dkim-signers.js";

const { ed, signers, resolver } = dkimTestKeys();
const verdicts = async (mime: string) => (await dkimVerify(Buffer.from(mime), { resolver })).results.map((r) => `${r.selector}:${r.status.result}`);

function aRecord(id: string, overrides: Partial<MessageRecord> = {}): MessageRecord {
  return {
    id,
    scope: { workspaceId: "wsp_1", environment: "live" },
    status: "sending",
    template: null,
    tracking: { opens: false, clicks: false, replies: false, unsubscribe: false },
    engagement: { opens: 0, clicks: 0, replies: 0 },
    scheduled_at: null,
    expires_at: null,
    idempotency_key: null,
    message_id_header: `<${id}@acme.example>`,
    mime: null,
    content_removed_at: null,
    event_seq: 1,
    created_at: Date.UTC(2026, 10, 21),
    updated_at: Date.UTC(2026, 10, 21),
    recipients: [],
    from: "Acme <hello@acme.example>",
    to: ["bob@example.net"],
    cc: [],
    bcc: [],
    reply_to: [],
    subject: `Your receipt ${id}`,
    html: `<p>Thanks for order <b>${id}</b>.</p>`,
    text: null,
    headers: { "X-Order": id },
    attachments: [{ filename: "receipt.txt", content_type: "text/plain", content_id: null, content: Buffer.from(`receipt ${id}`).toString("base64"), size: 14 }],
    tags: [],
    metadata: {},
    ...overrides,
  };
}

const request = (id: string, overrides: Partial<ComposeRequest> = {}): ComposeRequest => ({ message: aRecord(id), now: Date.UTC(2026, 10, 21, 12), signers, ...overrides });

describe("ComposeThreads", () => {
  let threads: ComposeThreads;
  afterEach(async () => {
    await threads?.close();
  });

  it("composes on a thread what composeMessage composes on this one, signed with both keys", async () => {
    threads = new ComposeThreads(1);
    const [there, here] = await Promise.all([threads.compose(request("msg_1")), composeMessage(request("msg_1"))]);
    expect(await verdicts(there.mime)).toEqual(["mr1:pass", "mr2:pass"]);
    expect(there.text).toBe(here.text);
    const [a, b] = await Promise.all([simpleParser(there.mime), simpleParser(here.mime)]);
    for (const field of ["messageId", "subject", "html", "text", "date"] as const) expect(a[field]).toEqual(b[field]);
    expect(a.headers.get("x-order")).toBe("msg_1");
    expect(a.attachments.map((x) => x.content.toString())).toEqual(["receipt msg_1"]);
  });

  it("answers every job with its own message when many are given at once, over several threads", async () => {
    threads = new ComposeThreads(2);
    const ids = Array.from({ length: 40 }, (_, i) => `msg_${i}`);
    const composed = await Promise.all(ids.map((id) => threads.compose(request(id))));
    const parsed = await Promise.all(composed.map((c) => simpleParser(c.mime)));
    expect(parsed.map((p) => p.messageId)).toEqual(ids.map((id) => `<${id}@acme.example>`));
    expect(await verdicts(composed[39]!.mime)).toEqual(["mr1:pass", "mr2:pass"]);
  });

  it("composes unsigned mail when the sender has no keys", async () => {
    threads = new ComposeThreads(1);
    const { mime } = await threads.compose(request("msg_u", { signers: [] }));
    expect(mime).not.toMatch(/^DKIM-Signature:/im);
    expect((await simpleParser(mime)).subject).toBe("Your receipt msg_u");
  });

  it("fails a job with the thread's error, and goes on with the next", async () => {
    threads = new ComposeThreads(1);
    const wrongKey: DkimSigner[] = [{ ...signers[0]!, privateKeyPem: ed.privateKeyPem }];
    await expect(threads.compose(request("msg_bad", { signers: wrongKey }))).rejects.toThrow(/is ed25519, not rsa/);
    expect(await verdicts((await threads.compose(request("msg_ok"))).mime)).toEqual(["mr1:pass", "mr2:pass"]);
  });

  it("fails the jobs of a thread that dies, and starts a new thread for the next", async () => {
    threads = new ComposeThreads(1);
    await threads.compose(request("msg_warm"));
    const held = threads.compose(request("msg_lost"));
    // The pool's only thread ends before it can answer (as if it crashed).
    const [thread] = (threads as unknown as { threads: Array<{ worker: { terminate(): Promise<number> } }> }).threads;
    void thread!.worker.terminate();
    await expect(held).rejects.toThrow(/compose thread stopped/);
    expect(await verdicts((await threads.compose(request("msg_next"))).mime)).toEqual(["mr1:pass", "mr2:pass"]);
  });

  it("fails what is in hand once closed, and takes no more", async () => {
    threads = new ComposeThreads(1);
    const held = expect(threads.compose(request("msg_held"))).rejects.toThrow(/closed/);
    await threads.close();
    await held;
    await expect(threads.compose(request("msg_after"))).rejects.toThrow(/closed/);
  });
});
