import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * The message log's Template filter, in real Chromium against the real server: a select of the
 * workspace's standard templates (listTemplates), narrowing the log to the messages rendered from
 * one of them (listMessages `template`, by slug), kept in the query string like the other filters.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const FROM = "Acme <hello@acme.example>";
const RECEIPT = { slug: "receipt", name: "Receipt", subject: "Your receipt", html: "<p>Thanks for your order.</p>" };
const WELCOME = { slug: "welcome", name: "Welcome", subject: "Welcome aboard", html: "<p>Hello!</p>" };

describe("filtering the message log by template", () => {
  let harness: DashboardHarness;
  let page: Page;

  const subjects = () => page.getByTestId("message-row").locator("td:nth-child(3)").allTextContents();
  const templateSelect = () => page.getByRole("form", { name: "Filters" }).getByLabel("Template");

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    const sandbox = await harness.sdk("sandbox");
    for (const template of [RECEIPT, WELCOME]) {
      await sandbox.templates.create(template);
      await sandbox.templates.publish(template.slug);
    }
    // A layout is never sent by itself, so it is no filter.
    await sandbox.templates.create({ slug: "base", name: "Base layout", kind: "layout", html: "<main>{{ content }}</main>" });
    await sandbox.messages.create({ from: FROM, to: "delivered@simulator.test", template: { slug: RECEIPT.slug } });
    await sandbox.messages.create({ from: FROM, to: "delivered@simulator.test", template: { slug: WELCOME.slug } });
    await sandbox.messages.create({ from: FROM, to: "delivered@simulator.test", subject: "Written by hand", html: "<p>Hi</p>" });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("offers the workspace's templates by name and slug, and narrows the log to one of them, in the address too", async () => {
    await page.goto("/messages");
    await expect.poll(subjects).toEqual(["Written by hand", WELCOME.subject, RECEIPT.subject]);
    await expect.poll(() => templateSelect().locator("option").allTextContents()).toEqual(["All templates", "Receipt (receipt)", "Welcome (welcome)"]);

    await templateSelect().selectOption({ label: "Receipt (receipt)" });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(subjects).toEqual([RECEIPT.subject]);
    expect(new URL(page.url()).search).toBe(`?template=${RECEIPT.slug}`);

    // The select shows the filter after a reload too (its options arrive after the page).
    await page.reload();
    await expect.poll(() => templateSelect().inputValue()).toBe(RECEIPT.slug);
    await expect.poll(subjects).toEqual([RECEIPT.subject]);

    await page.getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(subjects).toHaveLength(3);
    expect(harness.opened.errors).toEqual([]);
  });

  it("names the statuses in the Status filter as the badges do, and says the search takes a whole address", async () => {
    await page.goto("/messages");
    const status = page.getByRole("form", { name: "Filters" }).getByLabel("Status");
    // Once the page is shown (its code is fetched the first time it is opened).
    await status.waitFor();
    expect(await status.locator("option").allTextContents()).toEqual([
      "All statuses",
      "Scheduled",
      "Queued",
      "Sending",
      "Delivered",
      "Deferred",
      "Bounced",
      "Failed",
      "Suppressed",
      "Canceled",
    ]);
    await status.selectOption({ label: "Delivered" });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("status") === "delivered");

    // The API's recipient filter matches an address exactly: no part of one.
    const search = page.getByLabel("Search messages");
    const hint = page.locator(`[id="${await search.getAttribute("aria-describedby")}"]`);
    expect(await hint.textContent()).toContain("whole address");
  });
});
