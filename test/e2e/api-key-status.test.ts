import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPage, signInThroughPage } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * An API key's status on the API keys page (docs/dashboard.md), in real Chromium against the real
 * server: whether a key has expired is the server's call, made by its clock, so the page judges it
 * by the server's clock too, not by a browser's that is wrong.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const HOUR = 3_600_000;
const MINUTE = 60_000;

describe("API key status in the dashboard", () => {
  let harness: DashboardHarness;

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("judges a key's expiry by the server's clock: a browser an hour fast does not show a working key expired", async () => {
    // The server's Date headers are written by the real clock, so the test clock, which decides
    // when a key stops working, keeps to it.
    harness.server.testApp.clock.set(Date.now());
    const mr = await harness.sdk("sandbox");
    await mr.apiKeys.create({ name: "Half an hour left", expires_at: new Date(Date.now() + 30 * MINUTE).toISOString() });
    const expired = await mr.apiKeys.create({ name: "Nearly over", expires_at: new Date(Date.now() + 2_000).toISOString() });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    harness.server.testApp.clock.set(Date.now());
    expect(Date.parse(expired.expires_at ?? "")).toBeLessThanOrEqual(harness.server.testApp.clock.now());

    const fast = await openPage(harness.browser, harness.server.baseUrl);
    try {
      const { page } = fast;
      await page.clock.install({ time: Date.now() + HOUR });
      await signInThroughPage(page, OWNER.email, OWNER.password);
      await page.goto("/developers/api-keys");
      const status = (name: string) => page.getByTestId("api-key-row").filter({ hasText: name }).getByTestId("api-key-status").textContent();
      await page.getByTestId("api-key-row").filter({ hasText: "Half an hour left" }).waitFor();
      expect(await status("Half an hour left")).toBe("active");
      expect(await status("Nearly over")).toBe("expired");
      expect(fast.errors).toEqual([]);
    } finally {
      await fast.context.close();
    }
  });
});
