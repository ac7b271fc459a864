import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * The dashboard on a phone-sized screen, in real Chromium: one column, the navigation wrapped
 * within the screen, and a wide table scrolled inside its own box rather than widening the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const PAGES = [
  ["/", "Overview"],
  ["/messages", "Messages"],
  ["/developers/api-keys", "API keys"],
  ["/webhooks", "Webhooks"],
  ["/templates", "Templates"],
  ["/templates/welcome", "Welcome email"],
  ["/suppressions", "Suppressions"],
  ["/developers/request-log", "Request log"],
  ["/settings", "Settings"],
] as const;

describe("the dashboard on a narrow screen", () => {
  let harness: DashboardHarness;
  let page: Page;

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    const sdk = await harness.sdk("sandbox");
    for (const to of ["delivered@simulator.test", "bounced@simulator.test"]) {
      await sdk.messages.create({ from: "Acme <hello@acme.example>", to, subject: "A subject long enough to need its room in the table", text: "Hi" });
    }
    // Rows with actions: a table's header names that column for screen readers only, with text
    // positioned out of sight, which must stay inside the table's scrolling box too.
    await sdk.apiKeys.create({ name: "Billing service" });
    await sdk.suppressions.create({ email: "gone@example.com" });
    // The template editor: a row of header actions and a table of variables, each with its controls.
    await sdk.templates.create({
      slug: "welcome",
      name: "Welcome email",
      subject: "Welcome, {{ first_name }}",
      html: "<p>Hello {{ first_name }}, welcome to {{ plan }}.</p>",
      variables: [
        { name: "first_name", type: "string", default: "there", description: "The name they signed up with" },
        { name: "plan", type: "string", required: true, description: "The plan they chose" },
      ],
      publish: true,
    });
    await harness.server.testApp.drain();
    await page.setViewportSize({ width: 390, height: 844 });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it.each(PAGES)("fits %s into the screen's width, with every navigation link on screen", async (path, title) => {
    await page.goto(path);
    await page.getByRole("heading", { level: 1, name: title }).waitFor();
    const width = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: window.innerWidth }));
    expect(width.page, `${path} is ${width.page}px wide on a ${width.screen}px screen`).toBeLessThanOrEqual(width.screen);
    for (const link of await page.getByRole("navigation", { name: "Main" }).getByRole("link").all()) {
      const box = await link.boundingBox();
      expect(box, await link.textContent() ?? "").not.toBeNull();
      expect(box!.x + box!.width, `${await link.textContent()} ends off the screen`).toBeLessThanOrEqual(width.screen);
    }
    // The header's actions wrap rather than run off the screen's edge.
    for (const action of await page.locator(".page-header__actions").getByRole("button").all()) {
      const box = await action.boundingBox();
      expect(box, await action.textContent() ?? "").not.toBeNull();
      expect(box!.x + box!.width, `${await action.textContent()} ends off the screen`).toBeLessThanOrEqual(width.screen);
    }
    if (path === "/messages") await screenshot(page, "narrow-messages");
    if (path === "/templates/welcome") await screenshot(page, "narrow-template");
  });
});
