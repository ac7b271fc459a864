import type { Mailroom } from "mailroom";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * The dashboard's creating forms in real Chromium against the real server, when an answer is lost:
 * the request reaches the server and is carried out, but its answer (and those of the SDK's own
 * retries) never arrive, so the form shows an error and the member presses its button again. That
 * press carries the same Idempotency-Key (dashboard/src/lib/idempotent-attempt.ts), the server
 * replays what it did, and there is one endpoint, key, invitation or workspace, not two.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery", workspace_name: "Acme Mail" };

describe("creating from the dashboard when the first answer is lost", () => {
  let harness: DashboardHarness;
  let page: Page;
  let sandbox: Mailroom;

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    sandbox = await harness.sdk("sandbox");
  });

  afterAll(async () => {
    await harness?.close();
  });

  /**
   * Presses `button` with every answer to a POST to `path` lost after the server carried it out,
   * waits for the form's `failure`, then presses it again with answers let through and waits for
   * `success` (`betweenPresses` first, if given). Returns the Idempotency-Key of each POST that
   * reached the server.
   */
  async function pressAgainAfterLostAnswers(path: string, button: Locator, failure: Locator, success: Locator, betweenPresses?: () => Promise<void>): Promise<string[]> {
    const keys: string[] = [];
    let losing = true;
    const pattern = `**${path}`;
    await page.route(pattern, async (route) => {
      if (route.request().method() !== "POST") return route.continue();
      keys.push((await route.request().headerValue("idempotency-key")) ?? "");
      if (!losing) return route.continue();
      await route.fetch();
      return route.abort("connectionreset");
    });
    try {
      await button.click();
      await failure.waitFor({ timeout: 15_000 });
      losing = false;
      await betweenPresses?.();
      await button.click();
      await success.waitFor({ state: "attached", timeout: 15_000 });
    } finally {
      await page.unroute(pattern);
    }
    // The first press and the SDK's two retries of it, then the second press.
    expect(keys).toHaveLength(4);
    return keys;
  }

  it("adds one webhook endpoint, and shows its secret, when Add endpoint is pressed again after a lost answer", async () => {
    await page.goto("/webhooks");
    await page.getByRole("button", { name: "Add your first endpoint" }).click();
    const dialog = page.getByRole("dialog", { name: "Add endpoint" });
    await dialog.getByLabel("Endpoint URL").fill("http://127.0.0.1:9/mailroom");
    await dialog.getByLabel("Description (optional)").fill("Order service");

    const keys = await pressAgainAfterLostAnswers(
      "/v1/webhooks",
      dialog.getByRole("button", { name: "Add endpoint" }),
      dialog.getByText("Could not add the endpoint"),
      page.getByTestId("secret-dialog").getByTestId("webhook-secret"),
    );
    const endpoints = (await sandbox.webhooks.list()).data;
    expect(endpoints.map((endpoint) => endpoint.description)).toEqual(["Order service"]);
    // One key throughout: the server answered the second press with what it had done.
    expect(new Set(keys).size).toBe(1);
  });

  it("creates one API key, and shows its secret, when Create key is pressed again after a lost answer", async () => {
    await page.goto("/developers/api-keys");
    await page.getByRole("button", { name: "Create API key" }).click();
    const dialog = page.getByRole("dialog", { name: "Create API key" });
    await dialog.getByLabel("Name").fill("Checkout service");

    const keys = await pressAgainAfterLostAnswers(
      "/v1/api-keys",
      dialog.getByRole("button", { name: "Create key" }),
      dialog.getByText("Could not create the key"),
      page.getByRole("dialog", { name: "Save your API key" }).getByTestId("api-key-secret"),
    );
    const named = (await sandbox.apiKeys.list()).data.filter((key) => key.name === "Checkout service");
    expect(named).toHaveLength(1);
    // One key throughout: the server answered the second press with what it had done.
    expect(new Set(keys).size).toBe(1);
  });

  it("creates one API key when its dialog is closed after a lost answer and the same key is asked for again", async () => {
    await page.goto("/developers/api-keys");
    const dialog = page.getByRole("dialog", { name: "Create API key" });
    const openAndFill = async () => {
      await page.getByRole("button", { name: "Create API key" }).click();
      await dialog.getByLabel("Name").fill("Reporting");
    };
    await openAndFill();

    const keys = await pressAgainAfterLostAnswers(
      "/v1/api-keys",
      dialog.getByRole("button", { name: "Create key" }),
      dialog.getByText("Could not create the key"),
      page.getByRole("dialog", { name: "Save your API key" }).getByTestId("api-key-secret"),
      async () => {
        await dialog.getByRole("button", { name: "Cancel" }).click();
        await dialog.waitFor({ state: "detached" });
        await openAndFill();
      },
    );
    const named = (await sandbox.apiKeys.list()).data.filter((key) => key.name === "Reporting");
    expect(named).toHaveLength(1);
    // The dialog opened again carried on with the first press's key.
    expect(new Set(keys).size).toBe(1);
  });

  it("creates one invitation, and shows its link, when Invite is pressed again after a lost answer", async () => {
    await page.goto("/settings");
    const form = page.getByRole("form", { name: "Invite a member" });
    await form.getByLabel("Email address").fill("grace@acme.example");

    const keys = await pressAgainAfterLostAnswers(
      "/v1/invitations",
      form.getByRole("button", { name: "Invite", exact: true }),
      page.getByText("Could not create the invitation"),
      page.getByTestId("invitation-url"),
    );
    const invitations = (await sandbox.accounts.listInvitations()).data;
    expect(invitations.map((invitation) => invitation.email)).toEqual(["grace@acme.example"]);
    // A second invitation to the address would replace the first: the audit log would show both.
    const created = (await sandbox.auditEvents.list({ operation: "createInvitation" })).data;
    expect(created.map((event) => event.target.id)).toEqual([invitations[0]?.id]);
    // One key throughout: the server answered the second press with what it had done.
    expect(new Set(keys).size).toBe(1);
  });

  it("creates one workspace, and switches to it, when Create workspace is pressed again after a lost answer", async () => {
    await page.getByRole("button", { name: "New workspace" }).click();
    const dialog = page.getByRole("dialog", { name: "Create workspace" });
    await dialog.getByLabel("Workspace name").fill("Acme Staging");

    const switcher = page.getByLabel("Workspace", { exact: true });
    const keys = await pressAgainAfterLostAnswers(
      "/v1/workspaces",
      dialog.getByRole("button", { name: "Create workspace" }),
      dialog.getByRole("alert"),
      switcher.locator("option:checked", { hasText: "Acme Staging" }),
    );
    const workspaces = (await sandbox.accounts.get()).workspaces.map((workspace) => workspace.name);
    expect(workspaces.sort()).toEqual(["Acme Mail", "Acme Staging"]);
    // One key throughout: the server answered the second press with what it had done.
    expect(new Set(keys).size).toBe(1);
  });
});
