import type { Mailroom, Message } from "mailroom";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPage, screenshot, signInThroughPage } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * A scheduled message on its page, in real Chromium against the real server: its send time
 * arriving by the server's clock while a browser's clock is wrong, moved to a time picked in the
 * browser's own time zone, sent now, a refusal shown with the API's detail, canceled after asking,
 * and a viewer who sees the message but none of these controls. The server's clock is a test clock
 * (the worker does not run: `drain()` delivers what is due).
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const VIEWER = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const LETTER = { from: "Acme <hello@acme.example>", to: "lin@example.com", html: "<p>Your trial ends tomorrow.</p>" };
const HOUR = 3_600_000;
const MINUTE = 60_000;

describe("scheduled messages in the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;
  let mr: Mailroom;
  let moved: Message;

  const heading = () => page.getByRole("heading", { level: 1 });
  const scheduleForm = () => page.getByRole("form", { name: "Reschedule" });
  const result = () => page.getByTestId("reschedule-result");
  const summaryValue = (label: string, on: Page = page) => on.locator(".summary__row", { has: on.locator("dt", { hasText: label }) }).locator("dd");
  const now = () => harness.server.testApp.clock.now();

  /** A message scheduled `hours` ahead of the server's clock, with its own subject. */
  const scheduled = (subject: string, hours = 1) => mr.messages.create({ ...LETTER, subject, scheduled_at: new Date(now() + hours * HOUR).toISOString() });

  async function open(message: Message, on: Page = page): Promise<void> {
    await on.goto(`/messages/${message.id}`);
    await on.getByRole("heading", { level: 1, name: message.subject ?? "" }).waitFor();
  }

  /** The datetime-local value for an instant, as the browser's own time zone reads it. */
  const localValue = (instant: number) =>
    page.evaluate((ms) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16), instant);

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    mr = await harness.sdk("sandbox");
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("notices its send time arriving by the server's clock, not the browser's, and follows it until the worker has sent it", async () => {
    const serverClock = harness.server.testApp.clock;
    const slow = await openPage(harness.browser, harness.server.baseUrl);
    try {
      const { page: seen } = slow;
      // This browser's clock is an hour slow: by it, the send time is an hour away.
      await seen.clock.install({ time: Date.now() - HOUR });
      await signInThroughPage(seen, OWNER.email, OWNER.password);
      // The server's Date headers are written by the real clock, so here the test clock, which
      // decides when a message is due, keeps to it (first in this file: it only moves forward).
      serverClock.set(Date.now());
      const message = await mr.messages.create({ ...LETTER, subject: "On time", scheduled_at: new Date(Date.now() + 6_000).toISOString() });
      await open(message, seen);
      const card = seen.getByRole("region", { name: "Schedule" });
      const line = seen.getByTestId("reschedule-result");
      expect(await card.getByRole("form", { name: "Reschedule" }).count()).toBe(1);
      // The New time field starts at the server's now, not this browser's hour-old one.
      const earliest = await card.getByLabel("New time").evaluate((input) => new Date((input as HTMLInputElement).min).getTime());
      expect(Math.abs(earliest - Date.now())).toBeLessThan(2 * MINUTE);
      // The page's live regions as they are before the time comes.
      await seen.locator('[role="status"]').evaluateAll((regions) => regions.forEach((region) => region.setAttribute("data-before", "")));

      // The time comes: the card says so, in a live region that was there before (screen readers
      // announce a change to one, not one that appears), and offers neither button.
      await expect.poll(() => line.textContent(), { timeout: 15_000 }).toBe("Due now: it is sent next.");
      expect(await line.evaluate((element) => element.closest('[role="status"]')?.hasAttribute("data-before") ?? false)).toBe(true);
      expect(await seen.getByRole("form", { name: "Reschedule" }).count()).toBe(0);
      for (const name of ["Reschedule", "Send now"]) expect(await seen.getByRole("button", { name, exact: true }).count(), name).toBe(0);
      expect(await summaryValue("Status", seen).textContent()).toBe("scheduled");
      await screenshot(seen, "message-due-now");

      // The worker sends it; the page reads the message again and shows it, no reload asked.
      serverClock.set(Date.now());
      await harness.server.testApp.drain();
      await expect.poll(() => summaryValue("Status", seen).textContent(), { timeout: 10_000 }).toBe("delivered");
      expect(await seen.getByTestId("message-outcome").textContent()).toBe("Sent at its scheduled time: the message is delivered.");
      // Announced from a live region that was there before, as the Due now line was.
      expect(await seen.getByTestId("message-outcome").evaluate((element) => element.closest('[role="status"]')?.hasAttribute("data-before") ?? false)).toBe(true);
      // Playwright puts its clock into every frame: the email preview's sandbox blocks it, as it
      // blocks any script.
      expect(slow.errors.filter((error) => !error.includes("'about:srcdoc' because the document's frame is sandboxed"))).toEqual([]);
    } finally {
      await slow.context.close();
    }
  });

  it("moves a scheduled message to the time picked in the browser's time zone, and its timeline records the move", async () => {
    moved = await scheduled("Trial reminder");
    await open(moved);
    const field = scheduleForm().getByLabel("New time");
    // The field starts at the current send time, to the minute, in local time.
    const shown = await field.inputValue();
    expect(await page.evaluate((value) => new Date(value).getTime(), shown)).toBe(Math.floor(Date.parse(moved.scheduled_at ?? "") / MINUTE) * MINUTE);

    // A minute passes on the server too, as it would while someone picks a time.
    harness.server.testApp.clock.advance(MINUTE);
    const target = Math.floor((now() + 3 * HOUR) / MINUTE) * MINUTE;
    await field.fill(await localValue(target));
    await scheduleForm().getByRole("button", { name: "Reschedule", exact: true }).click();

    await expect.poll(() => result().textContent()).toMatch(/^Rescheduled for .+\.$/);
    expect((await mr.messages.get(moved.id)).scheduled_at).toBe(new Date(target).toISOString());
    // The result, the summary and the timeline say the same new time.
    const newTime = (await summaryValue("Scheduled for").textContent()) ?? "";
    expect(await result().textContent()).toBe(`Rescheduled for ${newTime}.`);
    expect(await summaryValue("Status").textContent()).toBe("scheduled");
    const events = page.getByTestId("event-row");
    await expect.poll(() => events.count()).toBe(2);
    expect(await events.nth(1).textContent()).toContain("message.scheduled");
    const details = (await events.nth(1).getByTestId("event-details").textContent()) ?? "";
    expect(details).toContain("moved from ");
    expect(details.endsWith(` to ${newTime}`), details).toBe(true);
    await screenshot(page, "message-rescheduled");
  });

  it("sends it now: due at once, and the worker then delivers it", async () => {
    harness.server.testApp.clock.advance(MINUTE);
    await scheduleForm().getByRole("button", { name: "Send now" }).click();

    await expect.poll(() => result().textContent()).toBe("Due now: it is sent next.");
    expect((await mr.messages.get(moved.id)).scheduled_at).toBe(new Date(now()).toISOString());
    await expect.poll(() => page.getByTestId("event-row").count()).toBe(3);

    await harness.server.testApp.drain();
    await page.reload();
    await heading().waitFor();
    await expect.poll(() => summaryValue("Status").textContent()).toBe("delivered");
    // Nothing left to move or stop.
    expect(await scheduleForm().count()).toBe(0);
    expect(await page.getByRole("button", { name: "Cancel message" }).count()).toBe(0);
  });

  it("offers nothing more to move once sent now, and follows the message until the worker has sent it, without a reload", async () => {
    const message = await scheduled("Follow me");
    await open(message);
    await scheduleForm().getByRole("button", { name: "Send now" }).click();

    await expect.poll(() => result().textContent()).toBe("Due now: it is sent next.");
    // Due now, the message is the worker's to send next: neither control is offered any more.
    for (const name of ["Reschedule", "Send now"]) expect(await page.getByRole("button", { name, exact: true }).count(), name).toBe(0);
    expect(await scheduleForm().count()).toBe(0);
    expect(await summaryValue("Status").textContent()).toBe("scheduled");

    // The worker sends it; the page reads the message again and shows it, no reload asked.
    await harness.server.testApp.drain();
    await expect.poll(() => summaryValue("Status").textContent(), { timeout: 10_000 }).toBe("delivered");
    expect(await page.getByTestId("message-outcome").textContent()).toBe("Sent now: the message is delivered.");
    expect(await result().count()).toBe(0);
    expect(await page.getByRole("button", { name: "Cancel message" }).count()).toBe(0);
  });

  it("shows the API's problem when the message was canceled meanwhile, and leaves it canceled", async () => {
    const message = await scheduled("Canceled elsewhere");
    await open(message);
    await mr.messages.cancel(message.id);
    // What the API says to anyone who tries now: the page must show its detail.
    const refusal = await mr.messages.reschedule(message.id, { scheduled_at: null }).catch((error: { detail?: string }) => error);

    await scheduleForm().getByRole("button", { name: "Send now" }).click();

    const problem = scheduleForm().getByRole("alert");
    await problem.waitFor();
    expect(await problem.textContent()).toContain("Could not reschedule the message");
    expect(await problem.textContent()).toContain("message_not_scheduled");
    expect(await problem.textContent()).toContain((refusal as { detail?: string }).detail ?? "(no detail)");
    expect(await result().textContent()).toBe("");
    expect((await mr.messages.get(message.id)).status).toBe("canceled");
    await screenshot(page, "message-reschedule-refused");
  });

  it("cancels a scheduled message after asking, which takes the Schedule card away", async () => {
    const message = await scheduled("Cancel me");
    await open(message);

    await page.getByRole("button", { name: "Cancel message" }).click();
    const dialog = page.getByRole("dialog", { name: "Cancel this message?" });
    await dialog.getByRole("button", { name: "Cancel message" }).click();

    await expect.poll(() => summaryValue("Status").textContent()).toBe("canceled");
    expect(await scheduleForm().count()).toBe(0);
    expect((await mr.messages.get(message.id)).status).toBe("canceled");
  });

  it("shows a viewer a scheduled message without Reschedule, Send now or Cancel message, and says who may", async () => {
    const message = await scheduled("Seen by a viewer");
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      const { page: seen } = viewer;
      await open(message, seen);
      expect(await seen.getByTestId("read-only-note").textContent()).toContain("reschedule or cancel");
      expect(await seen.getByRole("form", { name: "Reschedule" }).count()).toBe(0);
      for (const name of ["Reschedule", "Send now", "Cancel message"]) expect(await seen.getByRole("button", { name, exact: true }).count(), name).toBe(0);
      await screenshot(seen, "message-scheduled-viewer");
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.context.close();
    }
  });

  it("raised no script error but the refused reschedule's 409", () => {
    expect(harness.opened.errors.filter((error) => !error.includes("status of 409"))).toEqual([]);
  });
});
