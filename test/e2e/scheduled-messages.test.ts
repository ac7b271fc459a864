import type { Mailroom, Message } from "mailroom";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * A scheduled message on its page, in real Chromium against the real server: moved to a time
 * picked in the browser's own time zone, sent now, a refusal shown with the API's detail,
 * canceled after asking, and a viewer who sees the message but none of these controls. The
 * server's clock is a test clock (the worker does not run: `drain()` delivers what is due).
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
  const summaryValue = (label: string) => page.locator(".summary__row", { has: page.locator("dt", { hasText: label }) }).locator("dd");
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
