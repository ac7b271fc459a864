import { readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * The dashboard's code split by page (docs/dashboard.md, "Serving and security headers"), in real
 * Chromium against the real server: no script of the build over Vite's 500 kB, every one served
 * as an immutable asset, a page's code fetched when the page is first opened, and a page whose
 * code cannot be fetched any more (the dashboard was redeployed while the tab was open) shown as
 * the "Something went wrong" page with its Reload link, not as a blank page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const ASSETS = fileURLToPath(new URL("../../dashboard/dist/assets/", import.meta.url));
/** Vite's warning threshold (build.chunkSizeWarningLimit, in kB of minified code). */
const CHUNK_LIMIT = 500 * 1000;

describe("the dashboard's code, split by page", () => {
  let harness: DashboardHarness;
  let page: Page;
  const scripts = readdirSync(ASSETS).filter((name) => name.endsWith(".js"));
  /** The scripts the page fetched, by file name. */
  const fetched = new Set<string>();

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    page.on("response", (response) => {
      const { pathname } = new URL(response.url());
      if (pathname.startsWith("/assets/") && pathname.endsWith(".js")) fetched.add(pathname.slice("/assets/".length));
    });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("builds no script over 500 kB, and the server serves each as an immutable asset", async () => {
    const sizes = Object.fromEntries(scripts.map((name) => [name, statSync(`${ASSETS}${name}`).size]));
    expect(Object.entries(sizes).filter(([, size]) => size > CHUNK_LIMIT)).toEqual([]);
    for (const name of scripts) {
      const response = await fetch(`${harness.server.baseUrl}/assets/${name}`);
      expect(response.status, name).toBe(200);
      expect(response.headers.get("content-type"), name).toMatch(/javascript/);
      expect(response.headers.get("cache-control"), name).toBe("public, max-age=31536000, immutable");
      expect((await response.arrayBuffer()).byteLength, name).toBe(sizes[name]);
    }
  });

  it("fetches a page's code when the page is first opened", async () => {
    await page.goto("/");
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    const before = new Set(fetched);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Analytics" }).click();
    await page.getByRole("heading", { level: 1, name: "Analytics" }).waitFor();
    expect([...fetched].filter((name) => !before.has(name)).length).toBeGreaterThan(0);
    // Each one once, however often the page is opened again.
    const opened = new Set(fetched);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Analytics" }).click();
    await page.getByRole("heading", { level: 1, name: "Analytics" }).waitFor();
    expect(fetched).toEqual(opened);
  });

  it("shows Something went wrong with its Reload link when a page's code is gone since the tab was opened", async () => {
    await page.goto("/");
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    // A redeploy replaces the build: the scripts this tab has not fetched yet are no longer there.
    await page.route("**/assets/**", (route) => route.fulfill({ status: 404, contentType: "application/problem+json", body: JSON.stringify({ status: 404, title: "Not found" }) }));
    try {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click();
      const failed = page.getByTestId("app-error");
      await failed.waitFor();
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Something went wrong");
      expect(await failed.textContent()).toContain("newer version");
      expect(await failed.getByRole("link", { name: "Reload the dashboard" }).getAttribute("href")).toBe("/");
      await screenshot(page, "page-code-missing");
    } finally {
      await page.unroute("**/assets/**");
    }
    // The reload fetches the build the server has now.
    await page.getByRole("link", { name: "Reload the dashboard" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
  });

  it("raised no script error but the missing page's", () => {
    expect(harness.opened.errors.filter((error) => !/status of 404|dynamically imported module|The dashboard stopped on an error/.test(error))).toEqual([]);
  });
});
