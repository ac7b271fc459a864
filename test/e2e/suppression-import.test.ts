import type { Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * The Suppressions page's "Import addresses" card in real Chromium against the real server
 * (createSuppressionBatch): a pasted CSV export with a refused row, a list long enough for two
 * calls, a second import of the same text, text that is not a list, and a viewer, who has no
 * card. Each `it` runs on from where the previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const VIEWER = { name: "Linus Viewer", email: "linus@acme.example", password: "viewer horse battery" };
const BATCH = (url: URL) => url.pathname === "/v1/suppressions/batch";

const CSV = [
  "Email,Reason,Detail,Created",
  'ada@example.com,unsubscribe,"Lovelace, Ada: ""stop writing""",2026-01-02',
  "grace@example.com,,,2026-01-03",
  "not-an-address,complaint,,2026-01-04",
  "linus@example.com,Complaint,Reported as spam,2026-01-05",
].join("\n");

describe("importing addresses on the Suppressions page", () => {
  let harness: DashboardHarness;
  let page: Page;

  const card = () => page.getByRole("region", { name: "Import addresses" });
  const rows = () => page.getByTestId("suppression-row");
  const result = () => card().getByTestId("import-result");
  const progress = () => card().getByTestId("import-progress");
  const importText = async (text: string, reason = "Manual") => {
    await card().getByLabel("Addresses", { exact: true }).fill(text);
    await card().getByLabel("Reason", { exact: true }).selectOption({ label: reason });
    await card().getByRole("button", { name: "Import", exact: true }).click();
  };

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Suppressions", exact: true }).click();
    await page.locator(".empty--teach").waitFor();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("imports a pasted CSV export by its email, reason and detail columns, names the refused row by its line, and shows the new addresses in the list", async () => {
    await importText(CSV, "Unsubscribe");

    await result().waitFor();
    expect(await result().locator("p").textContent()).toBe("3 added, 0 already suppressed, 1 refused.");
    expect(await result().getByTestId("import-refused").allTextContents()).toEqual(['Line 4: not-an-address: email: "not-an-address" is not a valid email address']);
    await expect.poll(() => rows().count()).toBe(3);
    expect(await rows().filter({ hasText: "ada@example.com" }).textContent()).toContain('Lovelace, Ada: "stop writing"');
    // The reason chosen in the form went to the row that gave none.
    const sandbox = await harness.sdk("sandbox");
    const reasons = Object.fromEntries((await sandbox.suppressions.list()).data.map((suppression) => [suppression.email, suppression.reason]));
    expect(reasons).toEqual({ "ada@example.com": "unsubscribe", "grace@example.com": "unsubscribe", "linus@example.com": "complaint" });
    await screenshot(page, "suppression-import");
  });

  it("sends a long list 1,000 addresses per call, showing how far it got", async () => {
    const list = ["# readers of the old newsletter", ...Array.from({ length: 1_200 }, (_, index) => `reader${String(index).padStart(4, "0")}@example.org`)].join("\n");
    // Hold the second call until the progress line has been seen.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    await page.route(BATCH, async (route: Route) => {
      calls += 1;
      if (calls === 2) await held;
      await route.continue();
    });
    try {
      await importText(list);
      await expect.poll(() => progress().textContent()).toContain("1,000 / 1,200 addresses");
      await screenshot(page, "suppression-import-progress");
      release();
      await expect.poll(() => result().locator("p").textContent()).toBe("1,200 added, 0 already suppressed, 0 refused.");
    } finally {
      release();
      await page.unroute(BATCH);
    }
    expect(calls).toBe(2);
    expect(await progress().count()).toBe(0);
    // The list was loaded again: its first page is full.
    await expect.poll(() => rows().count()).toBe(25);
  });

  it("finds every address of a second import already suppressed, adding nothing twice", async () => {
    await importText(CSV);

    await expect.poll(() => result().locator("p").textContent()).toBe("0 added, 3 already suppressed, 1 refused.");
    const sandbox = await harness.sdk("sandbox");
    expect((await sandbox.suppressions.list({ email: "grace@example.com" })).data).toMatchObject([{ reason: "unsubscribe" }]);
  });

  it("says what is wrong with text that is not a list, and sends nothing", async () => {
    let calls = 0;
    await page.route(BATCH, (route: Route) => {
      calls += 1;
      return route.continue();
    });
    try {
      await importText("address,reason\nada@example.com,manual\n");
      const invalid = card().getByTestId("import-invalid");
      await invalid.waitFor();
      expect(await invalid.textContent()).toBe('No column is named "email" (the header row: address, reason); a CSV list starts with a header row naming its columns: email, and optionally reason and detail. Nothing was imported.');
      expect(await result().count()).toBe(0);
    } finally {
      await page.unroute(BATCH);
    }
    expect(calls).toBe(0);
  });

  it("has no import for a viewer, who may only read the list", async () => {
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      await viewer.page.goto("/suppressions");
      await viewer.page.getByTestId("read-only-note").waitFor();
      await viewer.page.getByTestId("suppression-row").first().waitFor();
      expect(await viewer.page.getByRole("region", { name: "Import addresses" }).count()).toBe(0);
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.context.close();
    }
  });

  it("raised no script error along the way", () => {
    expect(harness.opened.errors).toEqual([]);
  });
});
