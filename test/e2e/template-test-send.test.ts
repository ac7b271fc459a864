import type { Mailroom } from "mailroom";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * "Send a test" on the template page, in real Chromium against the real server: the dialog checks
 * the body with previewMessage (the rendered subject, what the simulator would do, the server's
 * problems beside their field) and sends it with createMessage, by slug, at the published version.
 * A send whose answer is lost is sent again under the same Idempotency-Key, so it exists once.
 * Each `it` runs on from where the previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const VIEWER = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const SLUG = "order-shipped";
const SENDER = "Acme <hello@acme.example>";
const SAMPLES = { first_name: "Ada", order_id: "A-1042" };
const SUBJECT = "Your order A-1042 has shipped";
const SUPPRESSED = "gone@example.org";

describe("sending a test of a template from the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;
  let sandbox: Mailroom;

  const dialog = () => page.getByRole("dialog", { name: "Send a test" });
  const field = (label: string) => dialog().getByLabel(label, { exact: true });
  /** The problems the form shows under one field. */
  const fieldErrors = (label: string) => dialog().locator(".field").filter({ has: page.getByLabel(label, { exact: true }) }).locator(".field__errors");
  const status = () => dialog().getByTestId("test-send-status");
  const recipients = () => dialog().getByTestId("test-send-recipient");
  const sendButton = () => dialog().getByRole("button", { name: /^Send( again)?$/ });

  async function openDialog(): Promise<Locator> {
    await page.getByRole("button", { name: "Send a test" }).click();
    await dialog().waitFor();
    return dialog();
  }

  /** Waits until the check has answered for the form as it is. */
  async function checked(): Promise<string> {
    await expect.poll(() => status().textContent(), { timeout: 15_000 }).toMatch(/^(Checked|It would not be sent)/);
    return (await status().textContent()) ?? "";
  }

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    sandbox = await harness.sdk("sandbox");
    // A draft, not yet published.
    await sandbox.templates.create({
      slug: SLUG,
      name: "Order shipped",
      subject: "Your order {{ order_id }} has shipped",
      html: "<p>Hi {{ first_name }}, order {{ order_id }} is on its way.</p>",
      variables: [
        { name: "first_name", type: "string", default: "there" },
        { name: "order_id", type: "string", required: true },
      ],
    });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("says that a template never published cannot be sent by its slug, with the server's problem beside it", async () => {
    await page.goto(`/templates/${SLUG}`);
    await page.getByRole("heading", { level: 1, name: "Order shipped" }).waitFor();
    // The dialog starts from the preview's sample values.
    await page.getByLabel("Sample values (JSON)").fill(JSON.stringify(SAMPLES));
    await expect.poll(() => page.getByTestId("preview-subject").textContent(), { timeout: 15_000 }).toBe(SUBJECT);

    await openDialog();
    const template = dialog().getByTestId("test-send-template");
    expect(await template.textContent()).toContain(`Sends ${SLUG} by its slug, as your code would, so its published version goes out: it has none yet. Publish it first.`);
    expect(await checked()).toMatch(/^It would not be sent/);
    expect(await template.locator(".field__errors").textContent()).toBe(`template ${SLUG} has no published version yet: publish it, or send a version (${SLUG}@1)`);
    expect(await sendButton().isDisabled()).toBe(true);
    await screenshot(page, "template-test-send-unpublished");
    await dialog().getByRole("button", { name: "Cancel" }).click();
    await dialog().waitFor({ state: "hidden" });
  });

  it("checks the published version with previewMessage: the sender it needs, then the rendered subject and the simulator's outcome", async () => {
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    await page.getByRole("dialog", { name: "Publish this draft?" }).getByRole("button", { name: "Publish" }).click();
    await expect.poll(() => page.locator(".template-summary").getByTestId("template-published").textContent()).toBe("v1");
    // Publishing starts the editor again from the server's template, sample values too.
    await page.getByLabel("Sample values (JSON)").fill(JSON.stringify(SAMPLES));

    await openDialog();
    expect(await dialog().getByTestId("test-send-template").textContent()).toContain("its published version goes out: v1.");
    expect(await dialog().getByTestId("test-send-template").textContent()).toContain("Sandbox");
    expect(await field("To").inputValue()).toBe(OWNER.email);
    expect(JSON.parse(await field("Variables (JSON)").inputValue())).toEqual(SAMPLES);

    // The workspace has no default sender: the server's problem is shown under From, once Send is
    // pressed (not on opening: nothing was tried yet), and nothing is sent.
    expect(await field("From (optional)").getAttribute("placeholder")).toMatch(/^Needed: no default sender/);
    await expect.poll(() => status().textContent(), { timeout: 15_000 }).toBe("Fill in what is needed, then press Send.");
    expect(await fieldErrors("From (optional)").count()).toBe(0);
    await sendButton().click();
    expect(await checked()).toMatch(/^It would not be sent/);
    expect(await fieldErrors("From (optional)").textContent()).toBe("is required: this workspace has no default sender (default_from)");
    expect(await sendButton().isDisabled()).toBe(true);

    await field("From (optional)").fill(SENDER);
    await expect.poll(() => checked()).toMatch(/^Checked/);
    expect(await fieldErrors("From (optional)").count()).toBe(0);
    expect(await dialog().getByTestId("test-send-subject").textContent()).toBe(SUBJECT);
    expect(await recipients().textContent()).toBe(`${OWNER.email} Sandbox The simulator would deliver it; nothing leaves Mailroom.`);
    expect(await dialog().textContent()).toMatch(/Size[\d,.\s ]+bytes/);

    // A simulator address says what it rehearses; a variable of the wrong type is shown under the variables.
    await field("To").fill("clicked@simulator.test");
    await expect.poll(() => recipients().textContent(), { timeout: 15_000 }).toContain("The simulator would deliver it, open it, then click its first link");
    await field("Variables (JSON)").fill(JSON.stringify({ ...SAMPLES, order_id: 1042 }));
    await expect.poll(() => checked()).toMatch(/^It would not be sent/);
    expect(await fieldErrors("Variables (JSON)").textContent()).toBe("order_id must be a string");
    await field("Variables (JSON)").fill(JSON.stringify(SAMPLES));
    await expect.poll(() => checked()).toMatch(/^Checked/);

    // A check stores and sends nothing.
    expect((await sandbox.messages.list()).data).toEqual([]);
    await screenshot(page, "template-test-send-checked");
  });

  it("sends it once even when the first answer is lost and Send is pressed again, and links to the message", async () => {
    // The first send reaches the server, but its answer (and the SDK's two retries) never arrive.
    const keys: string[] = [];
    let attempts = 0;
    await page.route("**/v1/messages", async (route) => {
      if (route.request().method() !== "POST") return route.continue();
      keys.push((await route.request().headerValue("idempotency-key")) ?? "");
      attempts += 1;
      if (attempts === 1) await route.fetch();
      if (attempts <= 3) return route.abort("connectionreset");
      return route.continue();
    });
    try {
      await sendButton().click();
      await dialog().getByText("Could not send").waitFor({ timeout: 15_000 });
      expect(attempts).toBe(3);
      expect((await sandbox.messages.list()).data).toHaveLength(1);

      await sendButton().click();
      const result = dialog().getByTestId("test-send-result");
      await result.waitFor({ timeout: 15_000 });
      expect(attempts).toBe(4);
      // One key throughout: the server answered the retry with the message it already had.
      expect(new Set(keys).size).toBe(1);
    } finally {
      await page.unroute("**/v1/messages");
    }
    const [message, ...others] = (await sandbox.messages.list()).data;
    expect(others).toEqual([]);
    expect(message).toMatchObject({ subject: SUBJECT, to: ["clicked@simulator.test"], from: SENDER, template: { slug: SLUG, version: 1 } });
    expect(await dialog().getByTestId("test-send-result").textContent()).toContain(message!.id);
    expect(await sendButton().textContent()).toBe("Send again");
    await screenshot(page, "template-test-send-sent");

    await dialog().getByRole("link", { name: "see the message" }).click();
    await page.waitForURL(`**/messages/${message!.id}`);
    await page.getByRole("heading", { level: 1, name: SUBJECT }).waitFor();
    await page.frameLocator('iframe[title="Email HTML preview"]').getByText("Hi Ada, order A-1042 is on its way.").waitFor();
  });

  it("warns that a suppressed address would be skipped, with the reason", async () => {
    await sandbox.suppressions.create({ email: SUPPRESSED, reason: "unsubscribe" });
    await page.goto(`/templates/${SLUG}`);
    await page.getByRole("heading", { level: 1, name: "Order shipped" }).waitFor();
    await openDialog();
    await field("From (optional)").fill(SENDER);
    await field("To").fill(SUPPRESSED);
    await expect.poll(() => recipients().textContent(), { timeout: 15_000 }).toContain(SUPPRESSED);
    const line = recipients().first();
    expect(await line.getAttribute("class")).toContain("notice--warning");
    expect(await line.textContent()).toMatch(/^gone@example\.org Suppressed \(Unsubscribe, since .+\): it would be skipped and get nothing\./);
    await screenshot(page, "template-test-send-suppressed");
    await dialog().getByRole("button", { name: "Cancel" }).click();
  });

  it("in live, marks the send as real mail and shows the unverified sender domain under From", async () => {
    await page.getByTestId("env-switch").click();
    await page.getByTestId("live-banner").waitFor();
    await openDialog();
    expect(await dialog().getByTestId("test-send-template").textContent()).toContain("Live Sends");
    expect(await dialog().getByTestId("test-send-template").textContent()).toContain("Real email, counted in the monthly quota.");
    await field("From (optional)").fill(SENDER);
    await expect.poll(() => fieldErrors("From (optional)").textContent(), { timeout: 15_000 }).toBe("acme.example is not a verified domain of this workspace");
    expect(await sendButton().isDisabled()).toBe(true);
    await dialog().getByRole("button", { name: "Cancel" }).click();
    await page.getByTestId("env-switch").click();
    await page.getByTestId("live-banner").waitFor({ state: "detached" });
  });

  it("does not offer a viewer the action", async () => {
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      const { page: seen } = viewer;
      await seen.goto(`/templates/${SLUG}`);
      await seen.getByRole("heading", { level: 1, name: "Order shipped" }).waitFor();
      expect(await seen.getByTestId("read-only-note").textContent()).toContain("send tests of them");
      expect(await seen.getByRole("button", { name: "Send a test" }).count()).toBe(0);
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.context.close();
    }
    // Chromium logs every 4xx answer and every request cut off: the 422s of the checks above, and the lost send.
    expect(harness.opened.errors.filter((error) => !error.includes("status of 422") && !error.includes("ERR_CONNECTION_RESET"))).toEqual([]);
  });
});
