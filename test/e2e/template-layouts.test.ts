import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import { templatePage } from "./template-page.js";

/**
 * Template layouts in real Chromium against the real server: a layout created and published in
 * the dashboard (no subject, its html placing `{{ content }}`), a template that chooses it in the
 * editor and previews inside it, the layout refused deletion while that template uses it, and
 * the layout's draft previewed with that template in it before it is published. Each `it` runs on
 * from where the one before left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const LAYOUT = "base";
const LAYOUT_HTML = '<div class="frame">\n<h2>Acme header</h2>\n{{ content }}\n<p class="footer">Acme footer</p>\n</div>';
const SLUG = "welcome";

describe("template layouts in the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;

  const { nav, editor, previewFrame, previewStatus, problems, sends, replace, previewSettled } = templatePage(() => page);
  const layoutSelect = () => page.getByRole("combobox", { name: "Layout", exact: true });
  const previewWith = () => page.getByRole("combobox", { name: "Preview with", exact: true });
  const layoutErrors = () => page.locator(".field").filter({ has: layoutSelect() }).locator(".field__errors");

  async function create(kind: "Standard template" | "Layout", name: string, slug: string): Promise<void> {
    await nav("Templates").click();
    await page.getByRole("button", { name: "New template" }).click();
    const dialog = page.getByRole("dialog", { name: "New template" });
    await dialog.getByLabel("Kind").selectOption({ label: kind });
    // The form says where a layout puts each template's content; its starter html places it.
    if (kind === "Layout") expect(await dialog.textContent()).toContain("Place the content of each template with {{ content }}");
    await dialog.getByLabel("Name").fill(name);
    await dialog.getByLabel("Slug").fill(slug);
    await dialog.getByRole("button", { name: kind === "Layout" ? "Create layout" : "Create template" }).click();
    await page.waitForURL(`**/templates/${slug}`);
  }

  async function publish(): Promise<void> {
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByRole("dialog", { name: "Publish this draft?" }).getByRole("button", { name: "Publish" }).click();
    await expect.poll(() => sends().textContent()).toBe("v1");
  }

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("creates a layout without a subject, refuses html without {{ content }}, and publishes it", async () => {
    await create("Layout", "Base layout", LAYOUT);
    expect(await page.getByTestId("template-kind").textContent()).toContain("Layout");
    expect(await page.getByTestId("layout-content-hint").textContent()).toContain("{{ content }}");
    for (const gone of [editor("Subject"), layoutSelect(), page.getByRole("button", { name: "Send a test" })]) expect(await gone.count()).toBe(0);
    // The starter already places the content, so it renders (with the content empty).
    expect(await previewSettled()).toBe("Version 1, as it renders now.");

    await replace(editor("HTML"), "<p>No content here</p>");
    const problem = problems().first();
    await problem.waitFor({ timeout: 15_000 });
    expect(await problem.textContent()).toContain("HTML must output {{ content }}");

    await replace(editor("HTML"), LAYOUT_HTML);
    await expect.poll(() => previewSettled()).toBe("Version 1, as it renders now.");
    await previewFrame().getByRole("heading", { name: "Acme header" }).waitFor();
    await screenshot(page, "template-layout");
    await publish();

    await nav("Templates").click();
    const row = page.getByTestId("template-row").filter({ hasText: "Base layout" });
    expect(await row.getByTestId("layout-badge").textContent()).toBe("Layout");
  });

  it("sends a template in the layout chosen in the editor, previewed inside it, and keeps the layout from deletion while used", async () => {
    const sdk = await harness.sdk("sandbox");
    // A layout listed in the select, then deleted behind the page's back: choosing it is refused at /layout.
    await sdk.templates.create({ kind: "layout", slug: "spare", name: "Spare", html: "{{ content }}" });
    await create("Standard template", "Welcome email", SLUG);
    expect(await page.getByTestId("template-kind").textContent()).toBe("Standard template");
    await expect.poll(() => layoutSelect().locator("option").allTextContents()).toEqual(["None", "Spare (spare), not published", "Base layout (base)"]);
    await sdk.templates.delete("spare");
    await layoutSelect().selectOption("spare");
    await expect.poll(() => layoutErrors().textContent(), { timeout: 15_000 }).toBe("no layout spare in this workspace");

    await layoutSelect().selectOption(LAYOUT);
    await expect.poll(() => previewSettled()).toBe(`Version 1 in layout ${LAYOUT} v1, as it renders now.`);
    expect(await layoutErrors().count()).toBe(0);
    // The template's content inside the layout's html, between its header and footer.
    const frame = previewFrame().locator(".frame");
    await frame.getByRole("heading", { name: "Acme header" }).waitFor();
    expect(await frame.locator("p").allTextContents()).toEqual(["Hello there,", "Thanks for signing up.", "Acme footer"]);
    expect((await sdk.templates.get(SLUG)).layout).toBe(LAYOUT);
    await screenshot(page, "template-in-layout");
    await publish();

    const message = await sdk.messages.create({ from: "Acme <hello@acme.example>", to: "delivered@simulator.test", template: { slug: SLUG } });
    expect(message.template).toMatchObject({ slug: SLUG, version: 1, layout: { slug: LAYOUT, version: 1 } });

    // The message's page names the template and the layout it was rendered in, each linked to its editor.
    await page.goto(`/messages/${message.id}`);
    const templateRow = page.locator(".summary__row").filter({ has: page.locator("dt", { hasText: /^Template$/ }) });
    await expect.poll(() => templateRow.locator("dd").textContent()).toBe(`${SLUG} v1 in layout ${LAYOUT} v1`);
    expect(await templateRow.getByRole("link", { name: `${SLUG} v1` }).getAttribute("href")).toBe(`/templates/${SLUG}`);
    expect(await templateRow.getByRole("link", { name: `${LAYOUT} v1` }).getAttribute("href")).toBe(`/templates/${LAYOUT}`);
    await templateRow.getByRole("link", { name: `${SLUG} v1` }).click();
    await page.waitForURL(`**/templates/${SLUG}`);

    await page.goto(`/templates/${LAYOUT}`);
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: "Delete layout?" });
    await dialog.getByRole("button", { name: "Delete layout" }).click();
    const refusal = dialog.getByRole("alert");
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("layout_in_use");
    expect(await refusal.textContent()).toContain(SLUG);
    await screenshot(page, "template-layout-in-use");
    expect((await sdk.templates.list({ kind: "layout" })).data.map((layout) => layout.slug)).toEqual([LAYOUT]);
    // Chromium logs every 4xx answer: the 422s above (no {{ content }}, the deleted layout) and the 409.
    expect(harness.opened.errors.filter((error) => !/status of (409|422)/.test(error))).toEqual([]);
  });

  it("previews the layout's draft with a template sent in it, and with empty content again, publishing nothing", async () => {
    const sdk = await harness.sdk("sandbox");
    await page.goto(`/templates/${LAYOUT}`);
    expect(await previewSettled()).toBe("Version 1, as it renders now.");
    await replace(editor("HTML"), LAYOUT_HTML.replace("Acme footer", "Acme footer, edited"));
    await expect.poll(() => previewSettled()).toBe("Version 2, as it renders now.");
    expect(await previewWith().locator("option").allTextContents()).toEqual(["Empty content", "Welcome email (welcome)"]);

    // The template's published version inside the layout's draft, the edited footer under it.
    await previewWith().selectOption(SLUG);
    await expect.poll(() => previewSettled()).toBe(`${SLUG} v1 in this layout's v2, as it would send once this layout is published.`);
    const frame = previewFrame().locator(".frame");
    await expect.poll(() => frame.locator("p").allTextContents()).toEqual(["Hello there,", "Thanks for signing up.", "Acme footer, edited"]);
    expect(await page.getByTestId("preview-subject").textContent()).toBe("Welcome email");
    await screenshot(page, "template-layout-preview-with");

    await previewWith().selectOption({ label: "Empty content" });
    await expect.poll(() => previewSettled()).toBe("Version 2, as it renders now.");
    await expect.poll(() => frame.locator("p").allTextContents()).toEqual(["Acme footer, edited"]);
    expect(await page.getByTestId("preview-subject").count()).toBe(0);

    // Only the layout's draft changed: the template still sends in the published layout.
    expect(await sdk.templates.get(LAYOUT)).toMatchObject({ published_version: 1, latest_version: 2, has_draft: true });
    const message = await sdk.messages.create({ from: "Acme <hello@acme.example>", to: "delivered@simulator.test", template: { slug: SLUG } });
    expect(message.template).toMatchObject({ slug: SLUG, version: 1, layout: { slug: LAYOUT, version: 1 } });

    // A layout no template is sent in has nothing to preview with.
    await sdk.templates.create({ kind: "layout", slug: "unused", name: "Unused", html: "{{ content }}" });
    await page.goto("/templates/unused");
    await previewSettled();
    expect(await previewWith().isDisabled()).toBe(true);
    expect(await previewWith().locator("option").allTextContents()).toEqual(["Empty content"]);
    expect(await page.locator(".field").filter({ has: previewWith() }).textContent()).toContain("No template is sent in this layout yet.");
    expect(await previewStatus().textContent()).toBe("Version 1, as it renders now.");
    expect(harness.opened.errors.filter((error) => !/status of (409|422)/.test(error))).toEqual([]);
  });
});
