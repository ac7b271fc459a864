import { Mailroom } from "mailroom";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * The audit log page (docs/dashboard.md), in real Chromium against the real server: a key the
 * owner creates in the dashboard is recorded as the owner's doing, named by their address, and a
 * domain that key then adds through the SDK as the key's, by its name; each with its id beside the
 * name, in words on the page rather than in a tooltip; the filter narrows the list
 * to one kind of change, and a developer is neither offered the page nor shown it. Each `it` runs
 * on from where the previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const DEVELOPER = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const KEY_NAME = "Deploy bot";
const DOMAIN = "mail.acme.example";

describe("the audit log in the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;
  let secret = "";
  let keyId = "";
  let domainId = "";
  let ownerId = "";

  const heading = () => page.getByRole("heading", { level: 1 });
  const rows = () => page.getByTestId("audit-event-row");
  const row = (operation: string) => page.locator(`[data-testid="audit-event-row"][data-operation="${operation}"]`);
  const operations = () => rows().evaluateAll((found) => found.map((element) => element.getAttribute("data-operation")));
  /** The sandbox's log as the API answers it, read with the owner's token. */
  const logFromApi = async (query: { operation?: string } = {}) => (await (await harness.sdk("sandbox")).auditEvents.list(query)).data;

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("records a key the owner creates in the dashboard, by the owner's address", async () => {
    await page.goto("/developers/api-keys");
    await page.getByRole("button", { name: "Create API key" }).click();
    const create = page.getByRole("dialog", { name: "Create API key" });
    await create.getByLabel("Name").fill(KEY_NAME);
    await create.getByRole("button", { name: "Create key" }).click();
    const secretDialog = page.getByRole("dialog", { name: "Save your API key" });
    secret = (await secretDialog.getByTestId("api-key-secret").textContent()) ?? "";
    await secretDialog.getByRole("button", { name: "Done" }).click();

    // Reached from Settings, where an owner is offered it.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings", exact: true }).click();
    await expect.poll(() => heading().textContent()).toBe("Settings");
    await page.getByRole("link", { name: "Audit log" }).click();
    await expect.poll(() => heading().textContent()).toBe("Audit log");
    expect(new URL(page.url()).pathname).toBe("/settings/audit-log");

    const created = row("createApiKey");
    await created.waitFor();
    const [recorded] = await logFromApi({ operation: "createApiKey" });
    keyId = recorded!.target.id!;
    expect(recorded!.actor.type).toBe("user");
    ownerId = recorded!.actor.id;
    // The user's email once the members list has loaded (their id until then), their id beside it.
    await expect.poll(() => created.getByTestId("audit-event-actor").textContent()).toBe(`${OWNER.email}Member ${ownerId}`);
    expect(await created.getByTestId("audit-event-actor").getByText(ownerId, { exact: true }).isVisible()).toBe(true);
    expect(await created.getByTestId("audit-event-actor").locator("[title]").count()).toBe(0);
    expect(await created.textContent()).toContain("Created API key");
    // The names of the fields the dashboard sent, never their values.
    expect(await created.getByTestId("audit-event-fields").textContent()).toContain("name");
    expect(await created.textContent()).not.toContain(KEY_NAME);
    expect(await created.getByTestId("audit-event-target").getByRole("link").getAttribute("href")).toBe("/developers/api-keys");
    expect(await created.getByTestId("audit-event-target").textContent()).toContain(keyId);

    // The request id, to quote when asking about the change.
    await created.getByRole("button", { name: `Copy request ID ${recorded!.request_id}` }).click();
    await expect.poll(() => created.getByRole("status").textContent()).toBe("Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(recorded!.request_id);
    expect(await created.textContent()).toContain(recorded!.ip_address ?? "—");
  });

  it("records a domain added through the SDK with that key, by the key's name and id, linked to the domain's page", async () => {
    const withKey = new Mailroom({ apiKey: secret, baseUrl: harness.server.baseUrl, maxRetries: 0 });
    domainId = (await withKey.domains.create({ name: DOMAIN })).id;

    await page.reload();
    const added = row("createDomain");
    await added.waitFor();
    // Newest first.
    expect((await operations())[0]).toBe("createDomain");
    // The key's name once the keys have loaded (listApiKeys), its id beside it.
    await expect.poll(() => added.getByTestId("audit-event-actor").textContent()).toBe(`${KEY_NAME}API key ${keyId}`);
    expect(await added.getByTestId("audit-event-actor").getByText(keyId, { exact: true }).isVisible()).toBe(true);
    expect(await added.textContent()).toContain("Created domain");
    await screenshot(page, "audit-log");

    await added.getByTestId("audit-event-target").getByRole("link", { name: domainId }).click();
    await page.getByRole("heading", { level: 1, name: DOMAIN }).waitFor();
    await page.goBack();
    await rows().first().waitFor();
  });

  it("narrows the list to one kind of change with the filter, kept in the address", async () => {
    expect(new Set(await operations())).toEqual(new Set(["createApiKey", "createDomain"]));
    await page.getByLabel("Change").selectOption({ label: "Created domain" });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(operations).toEqual(["createDomain"]);
    expect(new URL(page.url()).search).toBe("?operation=createDomain");

    await page.getByLabel("Change").selectOption({ label: "Revoked API key" });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.getByText("No changes match this filter.").waitFor();

    await page.getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(async () => (await operations()).length).toBe(2);
  });

  it("shows the domain, which both environments share, in the live log too, but not the sandbox key", async () => {
    await page.getByRole("switch", { name: "Live mode" }).click();
    await expect.poll(operations).toEqual(["createDomain"]);
    // Named in the live log too, though the key is the sandbox's.
    await expect.poll(() => row("createDomain").getByTestId("audit-event-actor").textContent()).toBe(`${KEY_NAME}API key ${keyId}`);
    await page.getByRole("switch", { name: "Live mode" }).click();
    await expect.poll(async () => (await operations()).length).toBe(2);
  });

  it("does not offer the audit log to a developer, and shows them the refusal if they go there", async () => {
    const developer = await harness.openAsInvitedMember(DEVELOPER, "developer");
    try {
      await developer.page.goto("/settings");
      await developer.page.getByRole("heading", { level: 1, name: "Settings" }).waitFor();
      // Once the page has loaded what a developer sees of it.
      await developer.page.getByTestId("member-row").first().waitFor();
      expect(await developer.page.getByRole("link", { name: "Audit log" }).count()).toBe(0);

      await developer.page.goto("/settings/audit-log");
      const refusal = developer.page.getByRole("alert");
      await expect.poll(() => refusal.textContent()).toContain("You don't have permission to do this");
      expect(await refusal.textContent()).toContain("insufficient_role");
      expect(await developer.page.getByTestId("audit-event-row").count()).toBe(0);
      await screenshot(developer.page, "audit-log-refused");
      // The browser's own line for the refused request, and nothing from the page.
      expect(developer.errors).toEqual([expect.stringMatching(/Failed to load resource: the server responded with a status of 403/)]);
    } finally {
      await developer.context.close();
    }
  });

  it("records the developer's invitation, sent with the owner's token outside the dashboard, as the owner's doing", async () => {
    await page.reload();
    const invited = row("createInvitation");
    await invited.waitFor();
    // The actor shows as its id until the members list has loaded, then by its email.
    await expect.poll(() => invited.getByTestId("audit-event-actor").textContent()).toBe(`${OWNER.email}Member ${ownerId}`);
    expect(await invited.getByTestId("audit-event-fields").textContent()).toBe("email, role");
  });
});
