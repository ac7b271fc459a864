import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

/**
 * Redeliver on the endpoint's page, in real Chromium against the real server: each press queues
 * one more delivery of the event (a new Idempotency-Key each time), so the buttons are disabled
 * while a redelivery runs, and a second press meanwhile queues nothing.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const REDELIVER = "**/v1/webhooks/*/redeliver";

describe("redelivering a webhook event from the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
  });

  afterAll(async () => {
    await harness?.close();
    await receiver?.close();
  });

  it("disables Redeliver while its request runs, so a second press queues nothing more", async () => {
    const sandbox = await harness.sdk("sandbox");
    const endpoint = await sandbox.webhooks.create({ url: receiver.url });
    receiver.secrets = [endpoint.secret ?? ""];
    const { event_id: eventId } = await sandbox.webhooks.test(endpoint.id, { type: "message.delivered" });
    await harness.server.testApp.drainWebhooks();
    await receiver.waitFor(1);

    await page.goto(`/webhooks/${endpoint.id}`);
    const redeliver = page.getByRole("button", { name: `Redeliver ${eventId}` });
    await redeliver.waitFor();

    // The redelivery's answer waits until the buttons have been looked at.
    let answer = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let posts = 0;
    await page.route(REDELIVER, async (route) => {
      posts += 1;
      await answered;
      await route.continue();
    });
    try {
      await redeliver.click();
      await expect.poll(() => redeliver.isDisabled()).toBe(true);
      // A disabled button dispatches no click, whoever presses it.
      await redeliver.click({ force: true });
      answer();
      await expect.poll(() => page.getByTestId("redeliver-result").textContent()).toContain(`${eventId} is queued to be sent again`);
    } finally {
      await page.unroute(REDELIVER);
    }
    expect(posts).toBe(1);
    await expect.poll(() => redeliver.first().isDisabled()).toBe(false);

    await harness.server.testApp.drainWebhooks();
    const received = await receiver.waitFor(2);
    expect(received.map((delivery) => delivery.id)).toEqual([eventId, eventId]);
    expect(receiver.unverified).toEqual([]);
  });
});
