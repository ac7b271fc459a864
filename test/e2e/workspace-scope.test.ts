import { Mailroom } from "mailroom";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * What the dashboard shows belongs to one workspace and one environment, in real Chromium against
 * the real server: a switch starts the page afresh, an answer that lands after the page moved on
 * is not shown over another record, a member removed from a workspace is moved along, and the
 * sandbox inbox leads to its messages from live. Each `it` runs on from where the one before left
 * the owner's page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery", workspace_name: "Acme" };
const OTHER_WORKSPACE = "Globex";
const MEMBER = { name: "Linus Torvalds", email: "linus@acme.example", password: "another long passphrase" };

describe("the workspace and environment a page shows", () => {
  let harness: DashboardHarness;
  let page: Page;
  let otherWorkspaceId = "";

  const heading = (on: Page = page) => on.getByRole("heading", { level: 1 });
  const nav = (name: string, on: Page = page) => on.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });
  const switcher = (on: Page = page) => on.getByRole("combobox", { name: "Workspace", exact: true });
  const liveSwitch = () => page.getByRole("switch", { name: "Live mode" });
  // The owner's SDK in a workspace of theirs other than the harness's.
  const otherSdk = async () => new Mailroom({ apiKey: await harness.session.token(otherWorkspaceId, "sandbox"), baseUrl: harness.server.baseUrl, maxRetries: 0 });

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    otherWorkspaceId = (await (await harness.sdk("sandbox")).accounts.createWorkspace({ name: OTHER_WORKSPACE })).id;
    // The page learns its workspaces from the session: load it again to have both.
    await page.reload();
    await switcher().selectOption({ label: OWNER.workspace_name });
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("opens a sandbox inbox message's details from live mode, switching the top bar to the sandbox", async () => {
    const sent = await (await harness.sdk("sandbox")).messages.create({ from: "Acme <hello@acme.example>", to: "grace@example.com", subject: "Your receipt #7", html: "<p>Thanks</p>" });
    await harness.server.testApp.drain();
    await liveSwitch().click();
    await page.getByTestId("live-banner").waitFor();

    await nav("Sandbox inbox").click();
    await page.getByTestId("inbox-message").filter({ hasText: "Your receipt #7" }).click();
    await page.getByRole("link", { name: "Details and events" }).click();

    await page.waitForURL(`**/messages/${sent.id}`);
    await expect.poll(() => heading().textContent()).toBe("Your receipt #7");
    expect(await page.getByTestId("env-badge").textContent()).toBe("Sandbox");
    expect(await page.getByTestId("live-banner").count()).toBe(0);
    expect(await liveSwitch().getAttribute("aria-checked")).toBe("false");
  });

  it("goes to the list of a record's kind when the environment is switched on its page, and stays on a shared template", async () => {
    // Left by the test before on a sandbox message's page: live has no such message.
    expect(new URL(page.url()).pathname).toMatch(/^\/messages\/msg_/);
    await liveSwitch().click();
    await page.waitForURL((url) => url.pathname === "/messages");
    await expect.poll(() => heading().textContent()).toBe("Messages");
    await page.getByTestId("live-banner").waitFor();
    expect(await page.getByRole("alert").count()).toBe(0);

    const webhook = await (await harness.sdk("live")).webhooks.create({ url: "http://127.0.0.1:9/hooks", description: "Live hooks" });
    await page.goto(`/webhooks/${webhook.id}`);
    await expect.poll(() => heading().textContent()).toBe("Live hooks");
    await liveSwitch().click();
    await page.waitForURL((url) => url.pathname === "/webhooks");
    await expect.poll(() => heading().textContent()).toBe("Webhooks");
    expect(await page.getByTestId("env-badge").textContent()).toBe("Sandbox");
    expect(await page.getByRole("alert").count()).toBe(0);
    // The list took the record's place in the history: Back does not return to a record the
    // environment now shown does not have.
    await page.goBack();
    await page.waitForURL((url) => url.pathname === "/messages");
    expect(await page.getByRole("alert").count()).toBe(0);

    // Templates belong to both environments: the switch keeps the page.
    await (await harness.sdk("sandbox")).templates.create({ slug: "shared", name: "Shared", subject: "Hi", html: "<p>Hi</p>" });
    await page.goto("/templates/shared");
    await expect.poll(() => heading().textContent()).toBe("Shared");
    await liveSwitch().click();
    await page.getByTestId("live-banner").waitFor();
    expect(new URL(page.url()).pathname).toBe("/templates/shared");
    await expect.poll(() => heading().textContent()).toBe("Shared");
    await liveSwitch().click();
    await expect.poll(() => page.getByTestId("live-banner").count()).toBe(0);
  });

  it("starts the page afresh on a switch of environment or workspace, leaving the top bar in place", async () => {
    await nav("Settings").click();
    await expect.poll(() => heading().textContent()).toBe("Settings");
    const email = page.getByLabel("Email address");
    const invitationLink = page.getByTestId("invitation-url");
    const invite = async (address: string) => {
      await email.fill(address);
      await page.getByRole("button", { name: "Invite", exact: true }).click();
      await invitationLink.waitFor();
    };
    // The top bar is not rebuilt by a switch: a mark left on its element stays.
    const topBar = page.locator("header.top-bar");
    await topBar.evaluate((element) => element.setAttribute("data-before-switch", ""));

    // A link shown once and a half-typed address, in the sandbox...
    await invite("margaret@acme.example");
    await email.fill("half-typed@acme.example");
    await liveSwitch().click();
    await page.getByTestId("live-banner").waitFor();
    // ...are not carried into live.
    await expect.poll(() => invitationLink.count()).toBe(0);
    expect(await email.inputValue()).toBe("");

    // Nor into another workspace.
    await invite("katherine@acme.example");
    await switcher().selectOption({ label: OTHER_WORKSPACE });
    await expect.poll(() => page.getByLabel("Workspace name").inputValue()).toBe(OTHER_WORKSPACE);
    expect(await invitationLink.count()).toBe(0);

    expect(await topBar.getAttribute("data-before-switch")).toBe("");
    await liveSwitch().click();
    await switcher().selectOption({ label: OWNER.workspace_name });
    await expect.poll(() => page.getByLabel("Workspace name").inputValue()).toBe(OWNER.workspace_name);
  });

  it("does not show a save answered after moving to another template over that template's page", async () => {
    const sdk = await harness.sdk("sandbox");
    await sdk.templates.create({ kind: "layout", slug: "base", name: "Base layout", html: "<div>{{ content }}</div>", publish: true });
    await sdk.templates.create({ slug: "welcome", name: "Welcome", subject: "Hi", html: "<p>Hi</p>", layout: "base" });
    await nav("Templates").click();
    await page.getByRole("link", { name: "Welcome", exact: true }).click();
    await expect.poll(() => heading().textContent()).toBe("Welcome");

    // The rename's answer is held back until the page shows the layout.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/v1/templates/welcome", async (route) => {
      if (route.request().method() !== "PATCH") return route.fallback();
      await released;
      await route.continue();
    });
    const saved = page.waitForResponse((response) => response.url().endsWith("/v1/templates/welcome") && response.request().method() === "PATCH");
    await page.getByRole("textbox", { name: "Name", exact: true }).fill("Welcome email");
    await page.getByRole("button", { name: "Save draft" }).click();
    // The Layout field's link to the layout: the same page, another template.
    await page.getByRole("link", { name: "base", exact: true }).click();
    await page.waitForURL("**/templates/base");
    await expect.poll(() => heading().textContent()).toBe("Base layout");

    release();
    expect((await saved).status()).toBe(200);
    // Let the answer reach the page, then check what it shows.
    await page.waitForTimeout(500);
    expect(await heading().textContent()).toBe("Base layout");
    expect((await sdk.templates.get("welcome")).name).toBe("Welcome email");
    await page.unroute("**/v1/templates/welcome");
  });

  it("moves a member removed from the workspace to another of theirs, then to the no-workspace page", async () => {
    const member = await harness.openAsInvitedMember(MEMBER, "developer");
    try {
      const on = member.page;
      const invitation = await (await otherSdk()).accounts.createInvitation({ email: MEMBER.email, role: "viewer" });
      await on.goto(`/invitations/${invitation.accept_url.split("/invitations/")[1]}`);
      await on.getByRole("button", { name: "Accept invitation" }).click();
      await switcher(on).selectOption({ label: OWNER.workspace_name });
      await nav("Messages", on).click();
      await expect.poll(() => heading(on).textContent()).toBe("Messages");

      const memberId = async (sdk: Mailroom) => (await sdk.accounts.listMembers()).data.find((row) => row.email === MEMBER.email)!.user_id;
      const acme = await harness.sdk("sandbox");
      await acme.accounts.removeMember(await memberId(acme));
      // The next call's token exchange is refused (404): the page asks for the session again.
      await nav("Overview", on).click();
      await expect.poll(() => switcher(on).locator("option:checked").textContent()).toBe(OTHER_WORKSPACE);
      await expect.poll(() => heading(on).textContent()).toBe("Overview");
      expect(await switcher(on).locator("option").allTextContents()).toEqual([OTHER_WORKSPACE]);

      const globex = await otherSdk();
      await globex.accounts.removeMember(await memberId(globex));
      await nav("Messages", on).click();
      await expect.poll(() => heading(on).textContent()).toBe("No workspace");
    } finally {
      await member.context.close();
    }
  });
});
