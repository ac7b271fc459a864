import type { Mailroom, Template } from "mailroom";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import { templatePage } from "./template-page.js";

/**
 * Publish and rollback on a template page opened before someone else changed the template, in
 * real Chromium against the real server: each is sent on the revision the page shows
 * (publishTemplate's base_revision), so the server refuses it (409 template_changed) instead of
 * publishing a draft the page never showed or rolling back over a version published since; the
 * page then offers what the editor's save conflict offers (load the newer version, or save mine
 * over it). Each `it` runs on from where the previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const SLUG = "receipt";

describe("publishing a template that someone else changed since the page loaded", () => {
  let harness: DashboardHarness;
  let page: Page;
  let sdk: Mailroom;

  const { editor, sends, replace, previewSettled } = templatePage(() => page);
  const notice = () => page.getByTestId("template-changed");
  const versionStates = async () =>
    Promise.all((await page.getByTestId("version-row").all()).map(async (row) => `${await row.locator("td").nth(0).textContent()} ${await row.locator(".badge").textContent()}`));

  async function publishDraft(): Promise<void> {
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByRole("dialog", { name: "Publish this draft?" }).getByRole("button", { name: "Publish" }).click();
  }

  async function loadNewer(): Promise<void> {
    await notice().getByRole("button", { name: "Load the newer version" }).click();
    await page.getByRole("dialog", { name: "Load the newer version?" }).getByRole("button", { name: "Discard my changes and load" }).click();
    await expect.poll(() => notice().count()).toBe(0);
  }

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    sdk = await harness.sdk("sandbox");
    await sdk.templates.create({ slug: SLUG, name: "Receipt", subject: "Receipt {{ order_id }}", html: "<p>Order {{ order_id }}</p>", publish: true });
    await sdk.templates.update(SLUG, { subject: "Your receipt {{ order_id }}" });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("does not publish a draft saved elsewhere as the page publishes, says so, and publishes it once loaded", async () => {
    await page.goto(`/templates/${SLUG}`);
    await page.getByRole("heading", { level: 1, name: "Receipt" }).waitFor();
    await previewSettled();
    expect(await sends().textContent()).toBe("v1Draft");
    // A colleague saves the draft just as the page's publish goes out: after anything the page
    // could check first, so only the publish itself can refuse it.
    let theirs: Template | undefined;
    await page.route(
      `**/v1/templates/${SLUG}/publish`,
      async (route) => {
        theirs = await sdk.templates.update(SLUG, { subject: "Theirs {{ order_id }}" });
        await route.continue();
      },
      { times: 1 },
    );
    await publishDraft();
    await notice().waitFor({ timeout: 15_000 });
    expect(await notice().textContent()).toContain("Nothing was published");
    expect(await page.getByRole("dialog", { name: "Publish this draft?" }).count()).toBe(0);
    await screenshot(page, "template-publish-changed");
    expect(theirs).toBeDefined();
    expect(await sdk.templates.get(SLUG)).toEqual(theirs);

    await loadNewer();
    await expect.poll(() => editor("Subject").textContent()).toBe("Theirs {{ order_id }}");
    await publishDraft();
    await expect.poll(() => sends().textContent()).toBe("v2");
    expect(await sdk.templates.get(SLUG)).toMatchObject({ published_version: 2, has_draft: false, subject: "Theirs {{ order_id }}" });
  });

  it("does not roll back over a version published elsewhere since, says so, and rolls back once it is loaded", async () => {
    await expect.poll(() => versionStates()).toEqual(["v2 Published", "v1 Archived"]);
    // A colleague publishes a fix that this page has not shown.
    await sdk.templates.update(SLUG, { subject: "Fixed {{ order_id }}" });
    await sdk.templates.publish(SLUG);

    await page.getByRole("button", { name: "Publish version 1 again" }).click();
    const dialog = page.getByRole("dialog", { name: "Publish this version again?" });
    expect(await dialog.textContent()).toContain("instead of version 2");
    await dialog.getByRole("button", { name: "Publish version 1" }).click();
    await notice().waitFor({ timeout: 15_000 });
    expect(await notice().textContent()).toContain("Version 1 was not published again");
    expect(await dialog.count()).toBe(0);
    expect(await sdk.templates.get(SLUG)).toMatchObject({ published_version: 3, subject: "Fixed {{ order_id }}" });

    await loadNewer();
    await expect.poll(() => versionStates()).toEqual(["v3 Published", "v2 Archived", "v1 Archived"]);
    await page.getByRole("button", { name: "Publish version 1 again" }).click();
    await dialog.getByRole("button", { name: "Publish version 1" }).click();
    await expect.poll(() => sends().textContent()).toBe("v1");
    expect((await sdk.templates.get(SLUG)).published_version).toBe(1);
  });

  it("publishes what the page shows over a draft saved elsewhere only when asked to save it over theirs", async () => {
    await replace(editor("Subject"), "Mine {{ order_id }}");
    await expect.poll(() => sends().textContent(), { timeout: 15_000 }).toBe("v1Draft");
    await previewSettled();
    // The colleague edits the same draft; this page's content has not changed since its save.
    await sdk.templates.update(SLUG, { subject: "Theirs again {{ order_id }}" });
    await publishDraft();
    await notice().waitFor({ timeout: 15_000 });
    expect(await notice().textContent()).toContain("Nothing was published");
    expect(await sdk.templates.get(SLUG)).toMatchObject({ published_version: 1, subject: "Theirs again {{ order_id }}" });

    await notice().getByRole("button", { name: "Save mine over it" }).click();
    await expect.poll(() => notice().count()).toBe(0);
    // The notice goes as the save starts (the page reads the template again first), not once it is stored.
    await expect.poll(async () => (await sdk.templates.get(SLUG)).subject).toBe("Mine {{ order_id }}");
    await publishDraft();
    await expect.poll(() => sends().textContent()).toBe("v4");
    expect(await sdk.templates.get(SLUG)).toMatchObject({ published_version: 4, has_draft: false, subject: "Mine {{ order_id }}" });
    // Chromium logs every 4xx answer: the 409s are the refused publishes and rollback.
    expect(harness.opened.errors.filter((error) => !error.includes("status of 409"))).toEqual([]);
  });
});
