import type { Mailroom } from "mailroom";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * The analytics page (docs/dashboard.md), in real Chromium against the real server: empty before
 * any mail, then three sandbox messages to the simulator's delivered@, bounced@ and opened@
 * (the last from a template), delivered by the worker (`drain()`), counted in the key figures,
 * the chart and the table as getMetrics reports them; by hour over the last 24 hours; narrowed
 * by tag and by template; the same for a viewer; and a refused filter shown as a problem. Each
 * `it` runs on from where the previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const VIEWER = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const FROM = "Acme <hello@acme.example>";
const TEMPLATE = { slug: "receipt", name: "Receipt" };

describe("the analytics page in the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;
  let sandbox: Mailroom;

  const heading = () => page.getByRole("heading", { level: 1 });
  /** A key figure's value and its note, by its label. */
  const stat = (label: string, on: Page = page) => on.locator(".stat").filter({ has: on.getByText(label, { exact: true }) });
  const figure = async (label: string, on: Page = page) => (await stat(label, on).locator(".stat__value").textContent())?.trim();
  const note = async (label: string, on: Page = page) => (await stat(label, on).locator(".stat__note").textContent())?.trim();
  const rows = () => page.getByTestId("metrics-bucket-row");
  const bars = () => page.getByTestId("metrics-chart-bucket");
  const cells = async (index: number) => (await rows().nth(index).locator("td").allTextContents()).map((text) => text.trim());
  const applyFilters = async (change: () => Promise<void>) => {
    await change();
    await page.getByRole("button", { name: "Apply filters" }).click();
  };

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    sandbox = await harness.sdk("sandbox");
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("is in the navigation beside Messages, and says when there is no mail yet, teaching the sandbox's addresses", async () => {
    const links = await page.getByRole("navigation", { name: "Main" }).getByRole("link").allTextContents();
    expect(links.slice(links.indexOf("Messages"), links.indexOf("Messages") + 2)).toEqual(["Messages", "Analytics"]);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Analytics", exact: true }).click();
    await expect.poll(() => heading().textContent()).toBe("Analytics");
    expect(new URL(page.url()).pathname).toBe("/analytics");

    const empty = page.getByTestId("analytics-empty");
    await empty.waitFor();
    expect(await empty.textContent()).toContain("No mail in this range.");
    expect(await empty.textContent()).toContain("Sandbox keys rehearse every outcome");
    expect(await empty.textContent()).toContain("bounced@simulator.test");
    expect(await page.getByTestId("metrics-chart").count()).toBe(0);
  });

  it("counts three sandbox messages in the key figures: accepted, delivered with its rate, bounce, complaint, open and click rates", async () => {
    await sandbox.templates.create({ ...TEMPLATE, subject: "Your receipt", html: "<p>Thanks for your order.</p>" });
    await sandbox.templates.publish(TEMPLATE.slug);
    await sandbox.messages.create({ from: FROM, to: "delivered@simulator.test", subject: "Welcome", html: "<p>Hi</p>", tags: ["welcome"] });
    await sandbox.messages.create({ from: FROM, to: "bounced@simulator.test", subject: "Welcome", html: "<p>Hi</p>", tags: ["welcome"] });
    await sandbox.messages.create({ from: FROM, to: "opened@simulator.test", template: { slug: TEMPLATE.slug }, tags: ["receipt"] });
    await harness.server.testApp.drain();

    await page.reload();
    await page.getByTestId("analytics-figures").waitFor();
    expect(await figure("Accepted")).toBe("3");
    expect(await figure("Delivered")).toBe("2");
    expect(await note("Delivered")).toBe("66.7% delivery rate, of 3 with a final outcome");
    expect(await figure("Bounce rate")).toBe("33.3%");
    expect(await note("Bounce rate")).toBe("1 bounced (1 hard, 0 soft), 0 failed");
    expect(await figure("Complaint rate")).toBe("0.0%");
    // Unique opens over deliveries: opened@ opened twice, one recipient; no machine opens.
    expect(await figure("Open rate")).toBe("50.0%");
    expect(await note("Open rate")).toBe("1 recipient opened; 0 machine opens counted apart");
    expect(await figure("Click rate")).toBe("0.0%");

    // The figures are the API's.
    const metrics = await sandbox.metrics.get({ granularity: "day" });
    expect(metrics.totals).toMatchObject({ accepted: 3, delivered: 2, bounced: 1, unique_opened: 1, opened: 2, delivery_rate: 0.6667 });
  });

  it("draws a bar group and a table row per day of the last 7, today's with its figures", async () => {
    expect(await page.getByRole("combobox", { name: "Range" }).locator("option:checked").textContent()).toBe("Last 7 days");
    expect(await rows().count()).toBe(7);
    expect(await bars().count()).toBe(7);
    const chart = page.getByRole("img", { name: /^Delivered, bounced and opened \(unique\) per day/ });
    expect(await chart.count()).toBe(1);
    // Today is the last bucket: accepted, delivered, deferred, bounced, opened (unique), clicked (unique), complained.
    expect(await cells(6)).toEqual(["3", "2", "0", "1", "1", "0", "0"]);
    expect(await cells(0)).toEqual(["0", "0", "0", "0", "0", "0", "0"]);
    expect(await bars().nth(6).locator("title").textContent()).toMatch(/\(UTC\): 2 delivered, 1 bounced, 1 opened \(unique\)$/);
    expect(await page.getByRole("columnheader").first().textContent()).toBe("Day (UTC)");
    await screenshot(page, "analytics");
  });

  it("shows the last 24 hours by hour, kept in the address", async () => {
    await applyFilters(async () => {
      await page.getByLabel("Range").selectOption({ label: "Last 24 hours" });
    });
    await expect.poll(() => page.getByRole("columnheader").first().textContent()).toBe("Hour (UTC)");
    expect(new URL(page.url()).search).toBe("?range=24h");
    expect(await rows().count()).toBe(24);
    expect(await bars().count()).toBe(24);
    expect(await page.getByRole("img", { name: /per hour/ }).count()).toBe(1);
    expect(await cells(23)).toEqual(["3", "2", "0", "1", "1", "0", "0"]);
    expect(await figure("Accepted")).toBe("3");
    await screenshot(page, "analytics-hourly");

    // A shared link opens on the same view.
    await page.reload();
    await expect.poll(() => rows().count()).toBe(24);
    expect(await page.getByLabel("Range").inputValue()).toBe("24h");
  });

  it("narrows the figures to a tag", async () => {
    await applyFilters(async () => {
      await page.getByLabel("Range").selectOption({ label: "Last 7 days" });
      await page.getByLabel("Tag").fill("welcome");
    });
    await expect.poll(() => figure("Accepted")).toBe("2");
    expect(new URL(page.url()).search).toBe("?tag=welcome");
    expect(await figure("Delivered")).toBe("1");
    expect(await note("Delivered")).toBe("50.0% delivery rate, of 2 with a final outcome");
    expect(await figure("Bounce rate")).toBe("50.0%");
    expect(await figure("Open rate")).toBe("0.0%");
    expect(await page.getByTestId("analytics-range").textContent()).toContain("tag welcome");
    expect(await rows().count()).toBe(7);

    await applyFilters(() => page.getByLabel("Tag").fill("nothing-tagged-so"));
    const empty = page.getByTestId("analytics-empty");
    await empty.waitFor();
    expect(await empty.textContent()).toContain("clear the filters");
  });

  it("narrows the figures to a template chosen from the workspace's templates", async () => {
    await page.getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(() => figure("Accepted")).toBe("3");
    const select = page.getByLabel("Template");
    await expect.poll(() => select.locator("option").allTextContents()).toEqual(["All templates", `${TEMPLATE.name} (${TEMPLATE.slug})`]);
    await applyFilters(async () => {
      await select.selectOption({ label: `${TEMPLATE.name} (${TEMPLATE.slug})` });
    });
    await expect.poll(() => figure("Accepted")).toBe("1");
    expect(new URL(page.url()).search).toBe(`?template=${TEMPLATE.slug}`);
    expect(await note("Delivered")).toBe("100.0% delivery rate, of 1 with a final outcome");
    expect(await figure("Bounce rate")).toBe("0.0%");
    expect(await figure("Open rate")).toBe("100.0%");
    // The select shows the filter after a reload too (its options arrive after the page).
    await page.reload();
    await expect.poll(() => page.getByLabel("Template").inputValue()).toBe(TEMPLATE.slug);
    expect(harness.opened.errors).toEqual([]);
  });

  it("shows a filter the API refuses as a problem, with its code and request id", async () => {
    await page.goto(`/analytics?tag=${"x".repeat(65)}`);
    const alert = page.getByRole("alert");
    await expect.poll(() => alert.textContent()).toContain("Could not load metrics");
    expect(await alert.textContent()).toMatch(/Request ID/);
    expect(await alert.getByRole("button", { name: "Retry" }).count()).toBe(1);
    expect(harness.opened.errors).toEqual([expect.stringMatching(/Failed to load resource: the server responded with a status of 4\d\d/)]);
    harness.opened.errors.length = 0;
  });

  it("shows the same figures to a viewer", async () => {
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      await viewer.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Analytics", exact: true }).click();
      await viewer.page.getByTestId("analytics-figures").waitFor();
      expect(await figure("Accepted", viewer.page)).toBe("3");
      expect(await note("Delivered", viewer.page)).toContain("66.7% delivery rate");
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.context.close();
    }
  });
});
