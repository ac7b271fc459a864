import type { Message } from "mailroom";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMaintenance, type MaintenanceLog } from "../../src/maintenance.js";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * Content retention in the dashboard (docs/retention.md), in real Chromium against the real
 * server: set in Settings, then a delivered sandbox message outlives it on the server's test
 * clock, and the worker's maintenance round (run here by hand, as the worker does not run)
 * removes its content. The message page and the inbox then say when and why, where the preview
 * was. Each `it` runs on from where the previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const VIEWER = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const DAY_MS = 24 * 3600 * 1000;
const FAIL_ON_ERROR: MaintenanceLog = { info() {}, warn() {}, error: (obj, msg) => expect.fail(`${msg}: ${JSON.stringify(obj)}`) };

describe("content retention in the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;
  let message: Message;
  /** When the maintenance round removed its content, as the page shows it. */
  let removedAt = "";

  const nav = (name: string) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });
  const heading = () => page.getByRole("heading", { level: 1 });
  // A new client each time: its token expires when the server's clock jumps a day.
  const sandbox = () => harness.sdk("sandbox");
  const retentionField = () => page.getByLabel("Content retention (days)");
  const removedNotice = (on: Page = page) => on.getByTestId("content-removed");
  const removedLine = () => removedNotice().locator("strong").textContent();
  /** An instant as the page shows it (lib/format's formatDateTime, in the browser's locale and zone). */
  const shownAs = (iso: string) =>
    page.evaluate((value) => new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" }).format(new Date(value)), iso);

  async function saveSettings(): Promise<void> {
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
  }

  /** Presses Save where the form asks first; the question's text, and the dialog to answer it. */
  async function saveAsked(): Promise<{ question: string; dialog: Locator }> {
    await page.getByRole("button", { name: "Save changes" }).click();
    const dialog = page.getByRole("dialog", { name: "Remove older content?" });
    await dialog.waitFor();
    return { question: (await dialog.textContent()) ?? "", dialog };
  }

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("sets a content retention in Settings, next to the monthly quota, for both environments", async () => {
    await nav("Settings").click();
    await expect.poll(() => heading().textContent()).toBe("Settings");
    await expect.poll(() => retentionField().inputValue()).toBe("");
    expect(await retentionField().getAttribute("placeholder")).toBe("Keep for good");
    // The field's hint, as assistive technology reads it with the field (aria-describedby).
    const hint = (await page.locator(`[id="${await retentionField().getAttribute("aria-describedby")}"]`).textContent()) ?? "";
    expect(hint).toContain("cannot be brought back");
    expect(hint).toContain("statuses and events are kept");

    await retentionField().fill("1");
    // Turning retention on removes content within minutes, for good: the form asks first.
    const { question, dialog } = await saveAsked();
    expect(question).toContain("Content is kept for good now.");
    expect(question).toContain("sent more than 1 day ago");
    await screenshot(page, "settings-retention-confirm");
    expect((await (await sandbox()).workspace.get()).content_retention_days).toBeNull(); // nothing saved yet
    await dialog.getByRole("button", { name: "Save and remove older content" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    await screenshot(page, "settings-retention");

    expect((await (await sandbox()).workspace.get()).content_retention_days).toBe(1);
    expect((await (await harness.sdk("live")).workspace.get()).content_retention_days).toBe(1);
  });

  it("previews a message while its content is kept", async () => {
    const mr = await sandbox();
    message = await mr.messages.create({ from: "Acme <hello@acme.example>", to: "delivered@simulator.test", subject: "Your receipt", html: "<p>Thanks for your order</p>" });
    await harness.server.testApp.drain();

    await page.goto(`/messages/${message.id}`);
    await page.getByRole("heading", { level: 1, name: "Your receipt" }).waitFor();
    await page.getByTestId("email-preview").waitFor();
    expect(await removedNotice().count()).toBe(0);
  });

  it("says when and why the content was removed, on the message page, instead of an empty preview", async () => {
    // A day and a moment later on the server's clock, the maintenance round removes it.
    harness.server.testApp.clock.advance(DAY_MS + 60_000);
    await runMaintenance(harness.server.testApp.runtime, FAIL_ON_ERROR);
    const removed = await (await sandbox()).messages.get(message.id);
    expect(removed).toMatchObject({ status: "delivered", html: null, text: null, mime: null });
    expect(removed.content_removed_at).not.toBeNull();

    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Your receipt" }).waitFor();
    removedAt = await shownAs(removed.content_removed_at!);
    await expect.poll(removedLine).toBe(`Content removed on ${removedAt} by the workspace's content retention, which keeps a message's content 1 day.`);
    expect(await removedNotice().textContent()).toContain("cannot be brought back");
    expect(await page.getByTestId("email-preview").count()).toBe(0);
    // What accounts for the message stays: its recipients and their status.
    expect(await page.getByTestId("recipient-row").first().textContent()).toContain("delivered@simulator.test");
    await screenshot(page, "message-content-removed");
    // Null bodies broke nothing (the 401s are the page's token, expired with the clock's jump and renewed).
    expect(harness.opened.errors.filter((error) => !/status of 401/.test(error))).toEqual([]);
  });

  it("says the same in the sandbox inbox", async () => {
    await page.goto(`/inbox/${message.id}`);
    await page.getByRole("heading", { level: 2, name: "Your receipt" }).waitFor();

    await expect.poll(removedLine).toBe(`Content removed on ${removedAt} by the workspace's content retention, which keeps a message's content 1 day.`);
    expect(await page.getByTestId("email-preview").count()).toBe(0);
  });

  it("says in place of a reply's text that its content was removed too", async () => {
    const mr = await sandbox();
    const replied = await mr.messages.create({ from: "Acme <hello@acme.example>", to: "replied@simulator.test", subject: "Any questions?", text: "Just reply" });
    await harness.server.testApp.drain();
    await page.goto(`/messages/${replied.id}`);
    await page.getByTestId("reply-text").waitFor();

    harness.server.testApp.clock.advance(DAY_MS + 60_000);
    await runMaintenance(harness.server.testApp.runtime, FAIL_ON_ERROR);
    const [reply] = (await (await sandbox()).messages.listReplies(replied.id)).data;
    expect(reply).toMatchObject({ text: null, content_removed_at: expect.any(String) });

    await page.reload();
    await page.getByTestId("reply-removed").waitFor();
    expect(await page.getByTestId("reply-removed").textContent()).toContain(`Content removed on ${await shownAs(reply!.content_removed_at!)}`);
    expect(await page.getByTestId("reply-text").count()).toBe(0);
  });

  it("leaves the days out once retention is turned off: content is then kept for good", async () => {
    await nav("Settings").click();
    await expect.poll(() => retentionField().inputValue()).toBe("1");
    await retentionField().fill("");
    await saveSettings();
    expect((await (await sandbox()).workspace.get()).content_retention_days).toBeNull();

    await page.goto(`/messages/${message.id}`);
    // Once the workspace has answered, with no retention to name.
    await page.locator('[data-testid="content-removed"][aria-busy="false"]').waitFor();
    expect(await removedLine()).toBe(`Content removed on ${removedAt} by the workspace's content retention.`);
  });

  it("asks before a save that shortens the retention the workspace has now, though the page loaded a shorter one", async () => {
    await (await sandbox()).workspace.update({ content_retention_days: 30 });
    await nav("Settings").click();
    await expect.poll(() => retentionField().inputValue()).toBe("30");
    // A script lengthens it meanwhile; the admin then types what is longer than the page shows.
    await (await sandbox()).workspace.update({ content_retention_days: 365 });
    await retentionField().fill("60");
    const { question, dialog } = await saveAsked();
    expect(question).toContain("Content is kept 365 days now.");
    expect(question).toContain("sent more than 60 days ago");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await (await sandbox()).workspace.get()).content_retention_days).toBe(365);

    // Lengthening what it keeps now is saved without asking; turning it off too.
    await retentionField().fill("400");
    await saveSettings();
    expect((await (await sandbox()).workspace.get()).content_retention_days).toBe(400);
    await retentionField().fill("");
    await saveSettings();
    expect((await (await sandbox()).workspace.get()).content_retention_days).toBeNull();
  });

  it("shows a viewer the notice too, and the retention field read-only", async () => {
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      await viewer.page.goto(`/messages/${message.id}`);
      await expect.poll(() => removedNotice(viewer.page).textContent()).toContain("Content removed on ");
      await viewer.page.goto("/settings");
      const field = viewer.page.getByLabel("Content retention (days)");
      await field.waitFor();
      expect(await field.isDisabled()).toBe(true);
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.context.close();
    }
  });
});
