import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import { swaks } from "../helpers/swaks.js";

/**
 * A reply with no text part, sent with swaks to the inbound SMTP server and read on the message
 * page in real Chromium: its text is derived from its HTML (an HTML body beside an attachment too),
 * and the Replies card shows that text with the HTML as written under it, in the same sandboxed
 * preview as a sent message's.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const DOMAIN = "acme.example";

describe("an HTML-only reply on the message page", () => {
  let harness: DashboardHarness;
  let page: Page;

  beforeAll(async () => {
    // The inbound SMTP server on a free port (runtime.startSmtp).
    harness = await startDashboardHarness({ owner: OWNER, env: { INBOUND_SMTP_PORT: "0" } });
    page = harness.page;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("shows the text derived from an HTML-only reply, and its HTML in the sandboxed preview", async () => {
    const sandbox = await harness.sdk("sandbox");
    const smtp = await harness.server.testApp.runtime.startSmtp();
    // The inbound server takes replies at the return-path domain of a domain of the workspace.
    await sandbox.domains.create({ name: DOMAIN });
    const sent = await sandbox.messages.create({ from: `Acme <hello@${DOMAIN}>`, to: "ada@example.com", subject: "Your invoice", text: "Attached.", track_replies: true });
    await harness.server.testApp.drain();
    const rendered = await sandbox.messages.get(sent.id);
    // Header fields unfolded (RFC 5322 §2.2.3): a long Reply-To is folded onto a second line.
    const replyTo = /^Reply-To:[^\r\n]*?(reply\+[^\s>]+)/im.exec((rendered.mime ?? "").replace(/\r?\n[ \t]+/g, " "))?.[1];
    expect(replyTo, rendered.mime ?? "no MIME").toBeDefined();

    const data = [
      "From: Ada <ada@example.com>",
      `To: ${replyTo}`,
      "Subject: Re: Your invoice",
      `In-Reply-To: ${rendered.message_id_header}`,
      "Message-ID: <html-reply@example.com>",
      "Date: Sat, 21 Nov 2026 10:12:00 +0000",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="part"',
      "",
      "--part",
      "Content-Type: text/html; charset=utf-8",
      "",
      "<p>Paid, <b>thank you</b>!</p>",
      "--part",
      'Content-Type: application/pdf; name="receipt.pdf"',
      'Content-Disposition: attachment; filename="receipt.pdf"',
      "Content-Transfer-Encoding: base64",
      "",
      "JVBERi0xLjQK",
      "--part--",
      "",
    ].join("\r\n");
    const result = await swaks({ server: `127.0.0.1:${smtp.port}`, from: "ada@example.com", to: replyTo as string, data });
    expect(result.last, result.transcript).toMatch(/^250 /);
    const [stored] = (await sandbox.messages.listReplies(sent.id)).data;
    expect(stored).toMatchObject({ text: "Paid, thank you!", html: expect.stringContaining("thank you") });

    await page.goto(`/messages/${sent.id}`);
    const reply = page.getByTestId("reply");
    await reply.waitFor();
    expect(await reply.getByTestId("reply-text").textContent()).toBe("Paid, thank you!");
    await reply.getByTestId("reply-html").getByText("HTML version").click();
    await reply.frameLocator('iframe[title="Email HTML preview"]').getByText("Paid, thank you!").waitFor();
    expect(await reply.locator("iframe").getAttribute("sandbox")).toBe("");
    expect(await reply.getByTestId("reply-attachment").textContent()).toContain("receipt.pdf");
    expect(harness.opened.errors).toEqual([]);
  });
});
