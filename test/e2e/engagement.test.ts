import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Mailroom, Message } from "mailroom";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import { swaks } from "../helpers/swaks.js";

/**
 * Engagement and replies in real Chromium against the real server: a sandbox message to the
 * simulator's opened@, clicked@ and replied@ addresses, delivered by the worker (`drain()`),
 * whose simulated opens, click and reply show on the message page (per recipient, in the
 * timeline, in the Replies card) and on the overview's chart; then a domain's tracking settings
 * and the workspace's tracking defaults saved through the pages; a real reply with an attachment,
 * sent with swaks to the inbound SMTP server, downloaded from the page byte for byte; and all of
 * it read-only for a viewer. Each `it` runs on from where the previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery", workspace_name: "Acme Mail" };
const VIEWER = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const DOMAIN = "acme.example";
const LINK = "https://acme.example/welcome?step=1";
const SUBJECT = "Welcome to Acme";

describe("engagement and replies in the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;
  let sandbox: Mailroom;
  let message: Message;
  /** The message the swaks reply answers. */
  let answered = "";
  let domainPath = "";

  const nav = (name: string) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });
  const heading = () => page.getByRole("heading", { level: 1 });
  const recipientRow = (email: string) => page.getByTestId("recipient-row").filter({ hasText: email });
  const stampsOf = async (email: string) => (await recipientRow(email).getByTestId("recipient-engagement").locator(".badge").allTextContents()).map((text) => text.trim());
  const eventRows = (type: string) => page.getByTestId("event-row").filter({ hasText: type });

  beforeAll(async () => {
    // The inbound SMTP server on a free port, started by the reply test (runtime.startSmtp).
    harness = await startDashboardHarness({ owner: OWNER, env: { INBOUND_SMTP_PORT: "0" } });
    page = harness.page;
    sandbox = await harness.sdk("sandbox");
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("shows on the message page who opened, clicked and replied, with the simulated client, link and first or repeat", async () => {
    message = await sandbox.messages.create({
      from: `Acme <hello@${DOMAIN}>`,
      to: ["opened@simulator.test", "clicked@simulator.test", "replied@simulator.test"],
      subject: SUBJECT,
      html: `<p>Hello! <a href="${LINK}">Start here</a>.</p>`,
      track_opens: true,
      track_clicks: true,
      track_replies: true,
    });
    await harness.server.testApp.drain();

    await page.goto(`/messages/${message.id}`);
    await expect.poll(() => heading().textContent()).toBe(SUBJECT);
    await recipientRow("opened@simulator.test").waitFor();
    expect(await page.getByTestId("message-tracking").textContent()).toBe("opens, clicks, replies");

    await expect.poll(() => stampsOf("opened@simulator.test")).toEqual(["Opened"]);
    expect(await stampsOf("clicked@simulator.test")).toEqual(["Opened", "Clicked"]);
    expect(await stampsOf("replied@simulator.test")).toEqual(["Opened", "Replied"]);

    // opened@ opens twice (phone, then desktop): the first marked first, the second a repeat.
    const opens = eventRows("message.opened").filter({ hasText: "opened@simulator.test" });
    await expect.poll(() => opens.count()).toBe(2);
    expect(await opens.nth(0).getByTestId("event-details").textContent()).toMatch(/^first open · simulatedMozilla.*iPhone.*\(simulated\)$/);
    expect(await opens.nth(1).getByTestId("event-details").textContent()).toMatch(/repeat.*Macintosh/);
    const click = eventRows("message.clicked");
    expect(await click.count()).toBe(1);
    expect(await click.getByTestId("event-details").textContent()).toContain(LINK);
    expect(await click.textContent()).toContain("clicked@simulator.test");
    expect(await eventRows("message.replied").getByTestId("event-details").textContent()).toContain("from replied@simulator.test");
    await screenshot(page, "message-engagement");
  });

  it("counts the people's opens, clicks and replies in the message's summary", async () => {
    // Four opens (two by opened@, one each by clicked@ and replied@), one click, one reply.
    expect(await page.getByTestId("message-engagement").textContent()).toBe("4 opens · 1 click · 1 reply");
  });

  it("shows the reply in the Replies card: sender, subject, text, its checks, and the quoted history collapsed", async () => {
    const replies = page.getByRole("region", { name: "Replies" });
    const reply = replies.getByTestId("reply");
    await reply.waitFor();
    expect(await reply.count()).toBe(1);
    expect(await reply.getByTestId("reply-from").textContent()).toContain("replied@simulator.test");
    expect(await reply.getByTestId("reply-subject").textContent()).toBe(`Re: ${SUBJECT}`);
    expect(await reply.getByTestId("reply-text").textContent()).toContain("Thanks");
    for (const check of ["spf", "dkim", "dmarc"]) expect(await reply.getByTestId(`auth-${check}`).textContent()).toMatch(new RegExp(`^${check} `, "i"));
    expect(await reply.textContent()).toContain("Simulated by the sandbox (recipient replied@simulator.test)");

    // The API's own answer is what the card shows.
    const [stored] = (await sandbox.messages.listReplies(message.id)).data;
    expect(stored).toMatchObject({ message_id: message.id, recipient: "replied@simulator.test", simulated: true });
    const quoted = reply.getByTestId("reply-quoted");
    if (stored?.quoted_text) {
      expect(await quoted.getAttribute("open")).toBeNull();
      expect(await quoted.locator(".reply__text").isVisible()).toBe(false);
      await quoted.locator("summary").click();
      expect(await quoted.locator(".reply__text").isVisible()).toBe(true);
    } else {
      expect(await quoted.count()).toBe(0);
    }
    expect(harness.opened.errors).toEqual([]);
  });

  it("puts today's opens and clicks on the overview, beside the statuses", async () => {
    await nav("Overview").click();
    await expect.poll(() => heading().textContent()).toBe("Overview");
    const chart = page.getByTestId("engagement-chart");
    await chart.waitFor();
    await chart.getByText("Show the numbers").click();
    const today = chart.getByTestId("engagement-day").last();
    expect((await today.locator("td").allTextContents()).map((text) => text.trim())).toEqual(["4", "1"]);
    const stat = (label: string) => page.locator(".stat").filter({ has: page.getByText(label, { exact: true }) }).locator(".stat__value");
    expect(await stat("Opens").textContent()).toBe("4");
    expect(await stat("Clicks").textContent()).toBe("1");
    await screenshot(page, "overview-engagement");
  });

  it("saves a domain's tracking settings, and lists the tracking domain's CNAME record to publish", async () => {
    const domain = await sandbox.domains.create({ name: DOMAIN });
    domainPath = `/domains/${domain.id}`;
    await page.goto(domainPath);
    await expect.poll(() => heading().textContent()).toBe(DOMAIN);
    const form = page.getByRole("form", { name: "Tracking settings" });
    expect(await form.getByLabel("Open tracking").inputValue()).toBe("workspace");
    expect(await form.getByLabel("Click tracking").inputValue()).toBe("workspace");
    expect(await page.getByTestId("record-purpose").allTextContents()).not.toContain("Tracking domain");

    await form.getByLabel("Open tracking").selectOption({ label: "On" });
    await form.getByLabel("Click tracking").selectOption({ label: "Off" });
    await form.getByLabel("Tracking domain").fill(`track.${DOMAIN}`);
    await form.getByRole("button", { name: "Save tracking settings" }).click();
    await expect.poll(() => form.getByRole("status").textContent()).toBe("Saved.");

    // Stored: the API says so, and a fresh page shows it.
    expect(await sandbox.domains.get(domain.id)).toMatchObject({ track_opens: true, track_clicks: false, tracking_domain: `track.${DOMAIN}` });
    await page.reload();
    await expect.poll(() => form.getByLabel("Open tracking").inputValue()).toBe("on");
    expect(await form.getByLabel("Click tracking").inputValue()).toBe("off");
    expect(await form.getByLabel("Tracking domain").inputValue()).toBe(`track.${DOMAIN}`);
    const tracking = page.getByTestId("dns-record-row").filter({ hasText: "Tracking domain" });
    expect(await tracking.getByTestId("record-type").textContent()).toBe("CNAME");
    expect(await tracking.getByTestId("record-name").textContent()).toBe(`track.${DOMAIN}`);
    await screenshot(page, "domain-tracking");
  });

  it("puts a domain back on the workspace's defaults, with no tracking domain", async () => {
    const form = page.getByRole("form", { name: "Tracking settings" });
    await form.getByLabel("Open tracking").selectOption({ label: "Workspace default" });
    await form.getByLabel("Tracking domain").fill("");
    await form.getByRole("button", { name: "Save tracking settings" }).click();
    await expect.poll(() => form.getByRole("status").textContent()).toBe("Saved.");
    const stored = await sandbox.domains.get(domainPath.split("/").pop() as string);
    expect(stored).toMatchObject({ track_opens: null, track_clicks: false, tracking_domain: null });
    expect(stored.records.map((record) => record.purpose)).not.toContain("tracking");
  });

  it("downloads a reply's attachment, received by the inbound SMTP server, byte for byte under the sender's file name", async () => {
    const smtp = await harness.server.testApp.runtime.startSmtp();
    // A message from the domain just added, whose return-path domain the inbound server serves.
    const sent = await sandbox.messages.create({ from: `Acme <hello@${DOMAIN}>`, to: "ada@example.com", subject: "Your invoice", text: "Attached.", track_replies: true });
    answered = sent.id;
    await harness.server.testApp.drain();
    const rendered = await sandbox.messages.get(sent.id);
    // Header fields unfolded (RFC 5322 §2.2.3): a long Reply-To is folded onto a second line.
    const replyTo = /^Reply-To:[^\r\n]*?(reply\+[^\s>]+)/im.exec((rendered.mime ?? "").replace(/\r?\n[ \t]+/g, " "))?.[1];
    expect(replyTo, rendered.mime ?? "no MIME").toBeDefined();

    const dir = mkdtempSync(join(tmpdir(), "mailroom-e2e-reply-"));
    // Not valid UTF-8: a download that went through text would change these bytes.
    const content = Buffer.from("\x89PNG\r\n\x1a\n e2e \x00\x01\xfe\xff", "latin1");
    try {
      writeFileSync(join(dir, "screenshot.png"), content);
      const result = await swaks({
        server: `127.0.0.1:${smtp.port}`,
        from: "ada@example.com",
        to: replyTo as string,
        headers: { Subject: "Re: Your invoice", "In-Reply-To": rendered.message_id_header },
        body: "Here is the screenshot.\n\nOn Sat, 21 Nov 2026, Acme wrote:\n> Attached.",
        attach: [[join(dir, "screenshot.png"), "image/png"]],
      });
      expect(result.last, result.transcript).toMatch(/^250 /);

      await page.goto(`/messages/${sent.id}`);
      const reply = page.getByTestId("reply");
      await reply.waitFor();
      expect(await reply.getByTestId("reply-text").textContent()).toBe("Here is the screenshot.");
      expect(await reply.getByTestId("reply-from").textContent()).toBe("ada@example.com");
      expect(await reply.getByTestId("auth-dmarc").textContent()).toMatch(/^DMARC (none|fail|pass|neutral|softfail|temperror|permerror)$/);
      // The quoted history is there, collapsed until asked for.
      const quoted = reply.getByTestId("reply-quoted");
      expect(await quoted.getAttribute("open")).toBeNull();
      expect(await quoted.locator(".reply__text").isVisible()).toBe(false);
      await quoted.locator("summary").click();
      expect(await quoted.locator(".reply__text").textContent()).toContain("> Attached.");
      const attachment = reply.getByTestId("reply-attachment");
      expect(await attachment.textContent()).toContain("screenshot.png");
      const [download] = await Promise.all([page.waitForEvent("download"), attachment.getByRole("button", { name: "Download screenshot.png" }).click()]);
      expect(download.suggestedFilename()).toBe("screenshot.png");
      const saved = join(dir, "downloaded.png");
      await download.saveAs(saved);
      expect(readFileSync(saved).equals(content)).toBe(true);
      await screenshot(page, "message-reply");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("saves the workspace's tracking defaults in Settings", async () => {
    await nav("Settings").click();
    await expect.poll(() => heading().textContent()).toBe("Settings");
    const defaults = page.getByTestId("tracking-defaults");
    const opens = defaults.getByLabel(/Track opens/);
    const unsubscribe = defaults.getByLabel(/One-click unsubscribe/);
    await expect.poll(() => opens.isChecked()).toBe(false);
    await opens.check();
    await unsubscribe.check();
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => page.getByRole("region", { name: "Workspace" }).getByRole("status").textContent()).toBe("Saved.");
    expect((await sandbox.workspace.get()).tracking).toEqual({ opens: true, clicks: false, replies: false, unsubscribe: true });
    await page.reload();
    await expect.poll(() => page.getByTestId("tracking-defaults").getByLabel(/Track opens/).isChecked()).toBe(true);
  });

  it("shows a viewer the engagement, the reply and the tracking settings, read-only", async () => {
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      await viewer.page.goto(`/messages/${message.id}`);
      await viewer.page.getByTestId("recipient-engagement").first().waitFor();
      expect(await viewer.page.getByTestId("recipient-engagement").count()).toBe(3);
      await viewer.page.goto(`/messages/${answered}`);
      await viewer.page.getByTestId("reply").waitFor();
      expect(await viewer.page.getByRole("button", { name: "Download screenshot.png" }).count()).toBe(1);

      await viewer.page.goto(domainPath);
      const form = viewer.page.getByRole("form", { name: "Tracking settings" });
      await form.waitFor();
      expect(await form.getByLabel("Open tracking").isDisabled()).toBe(true);
      expect(await form.getByLabel("Tracking domain").isDisabled()).toBe(true);
      expect(await form.getByRole("button", { name: "Save tracking settings" }).count()).toBe(0);
      expect(await viewer.page.getByTestId("read-only-note").textContent()).toContain("tracking settings");

      await viewer.page.goto("/settings");
      const opens = viewer.page.getByTestId("tracking-defaults").getByLabel(/Track opens/);
      await opens.waitFor();
      expect(await opens.isDisabled()).toBe(true);
      expect(await opens.isChecked()).toBe(true);
      await screenshot(viewer.page, "domain-tracking-viewer");
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.context.close();
    }
  });
});
