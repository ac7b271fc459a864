import { APIError, Mailroom } from "mailroom";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * An API key's restrictions set and changed on the API keys page (docs/dashboard.md), in real
 * Chromium against the real server, and read back through the API: what the form says is what the
 * key has, and the server holds the key to it. Each `it` runs on from where the previous one left
 * the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const VIEWER = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const KEY_NAME = "Checkout mailer";

describe("API key restrictions in the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;
  let secret = "";

  const row = () => page.getByTestId("api-key-row").filter({ hasText: KEY_NAME });
  const restrictionsLine = () => row().getByTestId("api-key-restrictions").textContent();
  /** The key as the API reports it, read with the owner's token. */
  const keyFromApi = async () => {
    const keys = await (await harness.sdk("sandbox")).apiKeys.list();
    return keys.data.find((key) => key.name === KEY_NAME);
  };
  const sendFrom = (from: string) =>
    new Mailroom({ apiKey: secret, baseUrl: harness.server.baseUrl, maxRetries: 0 }).messages
      .create({ from, to: "delivered@simulator.test", subject: "Your receipt", text: "Thanks" })
      .then((message) => message.status, (error: unknown) => (error instanceof APIError ? error.code : error));

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("creates a sending key limited to one sender domain, offering domain limits only for sending access", async () => {
    await page.goto("/developers/api-keys");
    await page.getByRole("button", { name: "Create API key" }).click();
    const dialog = page.getByRole("dialog", { name: "Create API key" });
    await dialog.getByLabel("Name").fill(KEY_NAME);
    await dialog.getByLabel("Allowed IP addresses").waitFor();
    // A full_access key could lift its own limits, so only sending keys are offered domain limits.
    expect(await dialog.getByLabel("Sender domains").count()).toBe(0);
    await dialog.getByLabel("Permission").selectOption("sending_access");
    await dialog.getByLabel("Sender domains").fill(" shop.acme.example \n");
    await screenshot(page, "api-key-create-restrictions");
    await dialog.getByRole("button", { name: "Create key" }).click();

    const secretDialog = page.getByRole("dialog", { name: "Save your API key" });
    secret = (await secretDialog.getByTestId("api-key-secret").textContent()) ?? "";
    await secretDialog.getByRole("button", { name: "Done" }).click();

    expect((await keyFromApi())?.restrictions).toEqual({ allowed_ips: null, sender_domains: ["shop.acme.example"], recipient_domains: null });
    expect(await sendFrom("Acme <orders@shop.acme.example>")).toBe("queued");
    expect(await sendFrom("Acme <hello@acme.example>")).toBe("sender_not_allowed");
  });

  it("shows the key's restrictions under its name in the list", async () => {
    await expect.poll(restrictionsLine).toBe("Sends from shop.acme.example · to anyone");
    await screenshot(page, "api-keys-restrictions");
  });

  it("shows the server's problem beside the field it is about, and changes nothing", async () => {
    await page.getByRole("button", { name: `Edit ${KEY_NAME}` }).click();
    const dialog = page.getByRole("dialog", { name: "Edit API key" });
    expect(await dialog.getByLabel("Sender domains").inputValue()).toBe("shop.acme.example");
    expect(await dialog.getByLabel("Allowed IP addresses").inputValue()).toBe("");
    await dialog.getByLabel("Allowed IP addresses").fill("127.0.0.1, 10.0.0.300");
    await dialog.getByRole("button", { name: "Save changes" }).click();

    const field = dialog.getByLabel("Allowed IP addresses");
    await expect.poll(() => field.getAttribute("aria-invalid")).toBe("true");
    // The problem is read with the field (aria-describedby), next to it on the page.
    const describedBy = (await field.getAttribute("aria-describedby")) ?? "";
    const described = await Promise.all(describedBy.split(" ").map((id) => page.locator(`[id="${id}"]`).textContent()));
    expect(described.join(" ")).toContain('"10.0.0.300" is not an IP address or CIDR range');
    // Said once, beside its field: the form's error box says the save was refused, not the problem again.
    const alert = dialog.getByRole("alert");
    expect(await alert.textContent()).toContain("Could not save the key");
    expect(await alert.textContent()).not.toContain("/restrictions/allowed_ips");
    expect(await alert.textContent()).not.toContain("is not an IP address or CIDR range");
    expect(await dialog.getByText("is not an IP address or CIDR range").count()).toBe(1);
    await screenshot(page, "api-key-edit-problem");
    expect((await keyFromApi())?.restrictions.allowed_ips).toBeNull();
  });

  it("edits the key: another sender domain and an allowed IP address, which the API then reports and enforces", async () => {
    const dialog = page.getByRole("dialog", { name: "Edit API key" });
    await dialog.getByLabel("Allowed IP addresses").fill("127.0.0.1\n203.0.113.0/24");
    await dialog.getByLabel("Sender domains").fill("mail.acme.example");
    await dialog.getByRole("button", { name: "Save changes" }).click();
    await dialog.waitFor({ state: "hidden" });

    await expect.poll(restrictionsLine).toBe("Only from 127.0.0.1, 203.0.113.0/24 · sends from mail.acme.example · to anyone");
    expect((await keyFromApi())?.restrictions).toEqual({ allowed_ips: ["127.0.0.1", "203.0.113.0/24"], sender_domains: ["mail.acme.example"], recipient_domains: null });
    expect(await sendFrom("Acme <orders@mail.acme.example>")).toBe("queued");
    expect(await sendFrom("Acme <orders@shop.acme.example>")).toBe("sender_not_allowed");
  });

  it("shows a viewer the restrictions, without Create, Edit, Rotate or Revoke", async () => {
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      const { page: seen } = viewer;
      await seen.goto("/developers/api-keys");
      const line = seen.getByTestId("api-key-row").filter({ hasText: KEY_NAME }).getByTestId("api-key-restrictions");
      await expect.poll(() => line.textContent()).toContain("sends from mail.acme.example");
      expect(await seen.getByTestId("read-only-note").count()).toBe(1);
      expect(await seen.getByRole("button", { name: "Create API key" }).count()).toBe(0);
      for (const action of ["Edit", "Rotate", "Revoke"]) {
        expect(await seen.getByRole("button", { name: `${action} ${KEY_NAME}` }).count(), action).toBe(0);
      }
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.context.close();
    }
  });

  it("raised no script error along the way", () => {
    // Chromium logs every 4xx answer: the 422 is the edit refused for its bad address.
    expect(harness.opened.errors.filter((error) => !/status of 422 /.test(error))).toEqual([]);
  });
});
