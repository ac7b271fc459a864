import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import { templatePage } from "./template-page.js";

/**
 * A template from "New template" to a message in the log, in real Chromium against the real
 * server: the CodeMirror editors, a declared variable, the live preview that saves the draft and
 * renders it on the server (escaping what a variable brings), a Liquid syntax error shown at its
 * line, publish, a new draft, the version history and a rollback; then the SDK sends it by slug,
 * and a viewer sees it all read-only. Each `it` runs on from where the previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const VIEWER = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const SLUG = "welcome";
const V1_HTML = "<h1>Hello {{ first_name }}</h1>\n<p>Welcome to {{ plan }}.</p>";
const V1_SUBJECT = "Welcome, {{ first_name }}";
const V2_SUBJECT = "Welcome aboard, {{ first_name }}";
const ADA = JSON.stringify({ first_name: "Ada", plan: "Pro" });

describe("templates in the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;

  const { nav, editor, previewFrame, problems, sends, replace, previewSettled } = templatePage(() => page);
  const heading = () => page.getByRole("heading", { level: 1 });
  const versionRows = () => page.getByTestId("version-row");

  const versionStates = async () =>
    Promise.all((await versionRows().all()).map(async (row) => `${await row.locator("td").nth(0).textContent()} ${await row.locator(".badge").textContent()}`));

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("has Templates in the navigation, and an empty list that explains sending by slug", async () => {
    await nav("Templates").click();
    await expect.poll(() => heading().textContent()).toBe("Templates");
    expect(await nav("Templates").getAttribute("aria-current")).toBe("page");
    expect(await page.locator(".page-header__description").textContent()).toContain("live and sandbox both send them");
    const empty = page.locator(".empty--teach");
    await empty.waitFor();
    expect(await empty.textContent()).toContain('template: { slug: "welcome", variables }');
    await screenshot(page, "templates-empty");
  });

  it("creates a template, which opens in the editor as a draft with a starter that already renders", async () => {
    await page.getByRole("button", { name: "Create your first template" }).click();
    const dialog = page.getByRole("dialog", { name: "New template" });
    await dialog.getByLabel("Name").fill("Welcome email");
    // The slug follows the name until edited.
    expect(await dialog.getByLabel("Slug").inputValue()).toBe("welcome-email");
    await dialog.getByLabel("Slug").fill(SLUG);
    await dialog.getByRole("button", { name: "Create template" }).click();

    await page.waitForURL(`**/templates/${SLUG}`);
    await expect.poll(() => heading().textContent()).toBe("Welcome email");
    expect(await page.getByTestId("template-slug").textContent()).toBe(SLUG);
    expect(await sends().textContent()).toContain("Not published");
    expect(await sends().textContent()).toContain("Draft");
    // The starter declares first_name with a default, so the preview renders it at once.
    expect(await page.getByRole("textbox", { name: "Variable 1 name" }).inputValue()).toBe("first_name");
    expect(await previewSettled()).toBe("Version 1, as it renders now.");
    await previewFrame().getByText("Hello there,").waitFor();
  });

  it("says which variables the saved content uses without declaring them, and declares one", async () => {
    await replace(editor("Subject"), V1_SUBJECT);
    await replace(editor("HTML"), `${V1_HTML}\n<p>{{ coupon }}</p>`);
    // Once the preview has saved the draft, the server has found what it uses.
    const undeclared = page.getByTestId("undeclared-variables");
    await expect.poll(() => undeclared.textContent(), { timeout: 15_000 }).toMatch(/^The saved content uses plan and coupon without declaring them\./);
    await page.getByRole("button", { name: "Declare coupon" }).click();
    expect(await page.getByRole("textbox", { name: "Variable 2 name" }).inputValue()).toBe("coupon");
    expect(await page.getByRole("combobox", { name: "Variable 2 type" }).inputValue()).toBe("string");
    expect(await undeclared.textContent()).toMatch(/^The saved content uses plan without declaring it\./);
    await screenshot(page, "template-undeclared-variables");

    // Taken out of the content, it is declared and unused until the row goes too.
    await replace(editor("HTML"), V1_HTML);
    await expect.poll(() => page.getByTestId("unused-variables").textContent(), { timeout: 15_000 }).toBe("Declared, not used by the saved content: coupon. Sends must still give it where required.");
    await page.getByRole("button", { name: "Remove coupon" }).click();
    await page.getByTestId("unused-variables").waitFor({ state: "detached" });
  });

  it("declares a variable, and the live preview renders the draft with the sample values, escaped", async () => {
    await page.getByRole("button", { name: "Add variable" }).click();
    await page.getByRole("textbox", { name: "Variable 2 name" }).fill("plan");
    // Declared by hand as well: the notice goes as soon as the name is typed.
    await page.getByTestId("undeclared-variables").waitFor({ state: "detached" });
    await page.getByRole("textbox", { name: "Variable 2 default" }).fill("the free plan");
    await page.getByRole("textbox", { name: "Variable 2 description" }).fill("The plan they chose");

    // Derived from the defaults until edited.
    const samples = page.getByLabel("Sample values (JSON)");
    await expect.poll(async () => JSON.parse(await samples.inputValue())).toEqual({ first_name: "there", plan: "the free plan" });
    await previewSettled();
    await previewFrame().getByRole("heading", { name: "Hello there" }).waitFor();
    expect(await previewFrame().locator("p").textContent()).toBe("Welcome to the free plan.");

    // A value with markup shows as text: Liquid output in the html is escaped.
    await samples.fill(JSON.stringify({ first_name: "<b>Ada</b>", plan: "Pro" }));
    await expect.poll(() => page.getByTestId("preview-subject").textContent(), { timeout: 15_000 }).toBe("Welcome, <b>Ada</b>");
    await previewFrame().getByRole("heading", { name: "Hello <b>Ada</b>" }).waitFor();
    expect(await previewFrame().locator("b").count()).toBe(0);
    expect(await previewFrame().locator("p").textContent()).toBe("Welcome to Pro.");

    // The draft was saved by the preview: the server has it.
    const sdk = await harness.sdk("sandbox");
    const saved = await sdk.templates.get(SLUG);
    expect(saved).toMatchObject({ has_draft: true, published_version: null, html: V1_HTML, subject: V1_SUBJECT });
    expect(saved.variables.map((variable) => [variable.name, variable.default])).toEqual([
      ["first_name", "there"],
      ["plan", "the free plan"],
    ]);
    await screenshot(page, "template-editor");
  });

  it("shows a Liquid syntax error with its field and line, and keeps the last good preview", async () => {
    await replace(editor("HTML"), "<h1>Hello {{ first_name }}</h1>\n<p>{% if plan %}Welcome to {{ plan }}.</p>");
    const problem = problems().first();
    await problem.waitFor({ timeout: 15_000 });
    expect(await problem.textContent()).toMatch(/^HTML, line 2 /);
    // The editor marks that line.
    const marked = editor("HTML").locator(".cm-problem-line");
    await expect.poll(() => marked.count()).toBe(1);
    expect(await marked.textContent()).toBe("<p>{% if plan %}Welcome to {{ plan }}.</p>");
    expect(await previewSettled()).toBe("The preview is out of date.");
    expect(await page.locator(".template-preview--stale").count()).toBe(1);
    // Refused, so the draft still has the last good source.
    const sdk = await harness.sdk("sandbox");
    expect((await sdk.templates.get(SLUG)).html).toBe(V1_HTML);
    await screenshot(page, "template-syntax-error");

    await replace(editor("HTML"), V1_HTML);
    await expect.poll(() => previewSettled()).toBe("Version 1, as it renders now.");
    expect(await problems().count()).toBe(0);
    expect(await editor("HTML").locator(".cm-problem-line").count()).toBe(0);
  });

  it("types Liquid key by key as written: a typed %} steps over the one the editor closed {% with", async () => {
    const typed = "Hi{% if plan %} on {{ plan }}{% endif %}";
    await editor("Subject").click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.press("Delete");
    await page.keyboard.type(typed);
    expect(await editor("Subject").textContent()).toBe(typed);
    await replace(editor("Subject"), V1_SUBJECT);
    await expect.poll(() => previewSettled()).toBe("Version 1, as it renders now.");
  });

  it("says which sample values are missing or of the wrong type, as the server checks them", async () => {
    const samples = page.getByLabel("Sample values (JSON)");
    await samples.fill(JSON.stringify({ first_name: 42, plan: "Pro", coupon: "X" }));
    await expect.poll(() => problems().count(), { timeout: 15_000 }).toBeGreaterThan(0);
    const text = (await problems().allTextContents()).join("\n");
    expect(text).toContain("first_name");
    expect(text).toContain("coupon");
    await page.getByRole("button", { name: "Use the defaults" }).click();
    await expect.poll(() => previewSettled()).toBe("Version 1, as it renders now.");
  });

  it("publishes the draft after asking", async () => {
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: "Publish this draft?" });
    expect(await dialog.textContent()).toContain(`Messages sent with ${SLUG} use this version from now on`);
    await dialog.getByRole("button", { name: "Publish" }).click();
    await expect.poll(() => sends().textContent()).toBe("v1");
    expect(await page.getByTestId("draft-status").textContent()).toContain("None");
    await expect.poll(() => versionStates()).toEqual(["v1 Published"]);
    expect(await page.getByRole("button", { name: "Publish", exact: true }).isDisabled()).toBe(true);
  });

  it("makes a new draft when the published template is edited, and lists it in the history", async () => {
    await replace(editor("Subject"), V2_SUBJECT);
    await expect.poll(() => sends().textContent(), { timeout: 15_000 }).toBe("v1Draft");
    await expect.poll(() => versionStates()).toEqual(["v2 Draft", "v1 Published"]);
    expect(await page.getByTestId("preview-subject").textContent()).toBe("Welcome aboard, there");
    // Sample values typed by hand outlive the publish: Send a test starts from them.
    await page.getByLabel("Sample values (JSON)").fill(ADA);
    await expect.poll(() => page.getByTestId("preview-subject").textContent(), { timeout: 15_000 }).toBe("Welcome aboard, Ada");

    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByRole("dialog", { name: "Publish this draft?" }).getByRole("button", { name: "Publish" }).click();
    await expect.poll(() => sends().textContent()).toBe("v2");
    await expect.poll(() => versionStates()).toEqual(["v2 Published", "v1 Archived"]);
    expect(await page.getByLabel("Sample values (JSON)").inputValue()).toBe(ADA);
    await expect.poll(() => page.getByTestId("preview-subject").textContent(), { timeout: 15_000 }).toBe("Welcome aboard, Ada");
    await screenshot(page, "template-history");
  });

  it("shows an earlier version as it was, and publishes it again (a rollback)", async () => {
    await page.getByRole("button", { name: "View version 1" }).click();
    const view = page.getByTestId("version-dialog");
    await expect.poll(() => view.getByTestId("version-subject").textContent()).toBe(V1_SUBJECT);
    expect(await view.getByTestId("version-html").textContent()).toBe(V1_HTML);
    await view.frameLocator('iframe[title="Email HTML preview"]').getByRole("heading", { name: "Hello there" }).waitFor();
    await view.getByRole("button", { name: "Close" }).click();

    await page.getByRole("button", { name: "Publish version 1 again" }).click();
    const dialog = page.getByRole("dialog", { name: "Publish this version again?" });
    expect(await dialog.textContent()).toContain("use version 1 again from now on, instead of version 2");
    await dialog.getByRole("button", { name: "Publish version 1" }).click();
    await expect.poll(() => sends().textContent()).toBe("v1");
    await expect.poll(() => versionStates()).toEqual(["v2 Archived", "v1 Published"]);
    expect(await page.getByLabel("Sample values (JSON)").inputValue()).toBe(ADA);
    await expect.poll(() => page.getByTestId("preview-subject").textContent(), { timeout: 15_000 }).toBe("Welcome, Ada");
    const sdk = await harness.sdk("sandbox");
    expect((await sdk.templates.get(SLUG)).published_version).toBe(1);
  });

  it("sends the published version by slug from the SDK, and the message shows in the log", async () => {
    const sdk = await harness.sdk("sandbox");
    const message = await sdk.messages.create({ from: "Acme <hello@acme.example>", to: "delivered@simulator.test", template: { slug: SLUG, variables: { first_name: "Grace", plan: "Team" } } });
    await harness.server.testApp.drain();

    await nav("Messages").click();
    const row = page.getByTestId("message-row").filter({ hasText: "Welcome, Grace" });
    await row.waitFor();
    await row.getByRole("link").first().click();
    await page.waitForURL(`**/messages/${message.id}`);
    await previewFrame().getByRole("heading", { name: "Hello Grace" }).waitFor();
    expect(await previewFrame().locator("p").textContent()).toBe("Welcome to Team.");
  });

  it("lists the template with its published version", async () => {
    await nav("Templates").click();
    const row = page.getByTestId("template-row").filter({ hasText: "Welcome email" });
    await row.waitFor();
    expect(await row.textContent()).toContain(SLUG);
    expect(await row.getByTestId("template-published").textContent()).toBe("v1");
    await screenshot(page, "templates");
  });

  it("shows a viewer the template read-only: editors locked, no Save, Publish, rollback or Delete, and a working preview", async () => {
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      const { page: seen } = viewer;
      await seen.goto("/templates");
      await seen.getByTestId("template-row").waitFor();
      expect(await seen.getByRole("button", { name: "New template" }).count()).toBe(0);
      expect(await seen.getByTestId("read-only-note").count()).toBe(1);

      await seen.goto(`/templates/${SLUG}`);
      await seen.getByRole("heading", { level: 1, name: "Welcome email" }).waitFor();
      expect(await editor("HTML", seen).getAttribute("contenteditable")).toBe("false");
      expect(await seen.getByRole("textbox", { name: "Variable 1 name" }).getAttribute("readonly")).not.toBeNull();
      for (const name of ["Save draft", "Publish", "Delete", "Add variable", "Publish version 2 again"]) {
        expect(await seen.getByRole("button", { name, exact: true }).count(), name).toBe(0);
      }
      // Rendering is open to viewers: the published version with its defaults.
      await seen.frameLocator('iframe[title="Email HTML preview"]').getByRole("heading", { name: "Hello there" }).waitFor({ timeout: 15_000 });
      expect(await seen.getByTestId("preview-status").textContent()).toBe("Version 1, as it renders now.");
      await screenshot(seen, "template-viewer");
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.context.close();
    }
  });

  it("stops saving when someone else changed the template since the page loaded, keeps what was typed, and loads theirs on request", async () => {
    await page.getByTestId("template-row").getByRole("link", { name: "Welcome email" }).click();
    await heading().filter({ hasText: "Welcome email" }).waitFor();
    await previewSettled();
    // CI saves a draft after the page loaded.
    const sdk = await harness.sdk("sandbox");
    const theirs = await sdk.templates.update(SLUG, { subject: "Theirs, {{ first_name }}" });
    await replace(editor("Subject"), "Mine, {{ first_name }}");
    const notice = page.getByTestId("template-changed");
    await notice.waitFor({ timeout: 15_000 });
    expect(await notice.textContent()).toContain("Someone else changed this template since you opened it");
    await screenshot(page, "template-changed");
    // Nothing of the stale editor was stored, and what was typed is still there.
    expect(await sdk.templates.get(SLUG)).toEqual(theirs);
    expect(await editor("Subject").textContent()).toBe("Mine, {{ first_name }}");

    await notice.getByRole("button", { name: "Load the newer version" }).click();
    await page.getByRole("dialog", { name: "Load the newer version?" }).getByRole("button", { name: "Discard my changes and load" }).click();
    await expect.poll(() => editor("Subject").textContent()).toBe("Theirs, {{ first_name }}");
    expect(await page.getByTestId("template-changed").count()).toBe(0);
    await nav("Templates").click();
  });

  it("deletes the template after asking", async () => {
    await page.getByTestId("template-row").getByRole("link", { name: "Welcome email" }).click();
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: "Delete template?" });
    await dialog.getByRole("button", { name: "Delete template" }).click();
    await page.waitForURL("**/templates");
    await page.locator(".empty--teach").waitFor();
    // Chromium logs every 4xx answer; the 422s are the syntax error and the bad sample values
    // above, the 409 the stale editor's save.
    expect(harness.opened.errors.filter((error) => !error.includes("status of 422") && !error.includes("status of 409"))).toEqual([]);
  });
});
