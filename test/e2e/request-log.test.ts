import { APIError, Mailroom } from "mailroom";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * The request log pages (docs/dashboard.md), in real Chromium against the real server: a send a
 * sandbox key had refused and one it had accepted, found in the list under Developers, narrowed
 * to client errors, the refused one's page with its field error; the request id of a problem the
 * dashboard showed, leading to its entry; and a viewer, who is neither offered the log nor shown
 * it. Each `it` runs on from where the previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const VIEWER = { name: "Linus Viewer", email: "linus@acme.example", password: "another fine passphrase" };
const KEY_NAME = "Checkout service";

describe("the request log in the dashboard", () => {
  let harness: DashboardHarness;
  let page: Page;
  let withKey: Mailroom;
  let keyId = "";
  let ownerId = "";
  let refused: APIError;

  const heading = () => page.getByRole("heading", { level: 1 });
  const rows = () => page.getByTestId("request-log-row");
  const row = (requestId: string) => page.locator(`[data-testid="request-log-row"][data-request-id="${requestId}"]`);
  const statuses = () => rows().evaluateAll((found) => found.map((element) => element.getAttribute("data-status")));
  /** What the server holds in memory, written now rather than within the second. */
  const flushLog = () => harness.server.testApp.runtime.services.requestLogs.flush();
  const send = (to: string) => withKey.messages.create({ from: "Acme <orders@acme.example>", to, subject: "Your receipt", text: "Thanks" });

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    const created = await (await harness.sdk("sandbox")).apiKeys.create({ name: KEY_NAME });
    keyId = created.id;
    ownerId = (await (await harness.sdk("sandbox")).accounts.listMembers()).data.find((member) => member.email === OWNER.email)!.user_id;
    withKey = new Mailroom({ apiKey: created.secret, baseUrl: harness.server.baseUrl, maxRetries: 0 });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("lists a send the key had refused and one it had accepted, under Developers", async () => {
    const error = await send("ada@").then(
      () => undefined,
      (caught: unknown) => caught,
    );
    if (!(error instanceof APIError)) throw new Error(`expected the send to be refused, got ${String(error)}`);
    refused = error;
    expect(refused.status).toBe(422);
    expect((await send("delivered@simulator.test")).status).toBe("queued");
    await flushLog();

    await page.goto("/developers/api-keys");
    await heading().filter({ hasText: "API keys" }).waitFor();
    // The key's last use, and the address it came from.
    expect(await page.getByTestId("api-key-row").filter({ hasText: KEY_NAME }).textContent()).toContain("from 127.0.0.1");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Request log" }).click();
    await expect.poll(() => heading().textContent()).toBe("Request log");
    expect(new URL(page.url()).pathname).toBe("/developers/request-log");

    const failed = row(refused.request_id!);
    await failed.waitFor();
    expect(await failed.getAttribute("data-status")).toBe("422");
    expect(await failed.getByTestId("request-log-status").textContent()).toBe("422");
    expect(await failed.getByTestId("request-log-error-code").textContent()).toBe("validation_failed");
    // Named once the keys have loaded (listApiKeys), by its id until then; the id shown beside the name.
    await expect.poll(() => failed.getByTestId("request-log-credential").textContent()).toBe(`${KEY_NAME} ${keyId}`);
    expect(await failed.getByTestId("request-log-credential").getByText(keyId, { exact: true }).isVisible()).toBe(true);
    expect(await failed.textContent()).toContain("POST");
    expect(await failed.textContent()).toContain("/v1/messages");

    // The key's two requests, newest first: the accepted send after the refused one.
    const byKey = rows().filter({ has: page.getByTestId("request-log-credential").getByText(KEY_NAME, { exact: true }) });
    expect(await byKey.evaluateAll((found) => found.map((element) => element.getAttribute("data-status")))).toEqual(["202", "422"]);
    // The dashboard's own calls are there too, as the member's, by their address (listMembers) and id.
    const byOwner = page.getByTestId("request-log-credential").filter({ has: page.getByText(OWNER.email, { exact: true }) });
    await expect.poll(() => byOwner.count()).toBeGreaterThan(0);
    expect(await byOwner.first().textContent()).toBe(`${OWNER.email} ${ownerId}`);
    expect(await byOwner.first().getByText(ownerId, { exact: true }).isVisible()).toBe(true);
    await screenshot(page, "request-log");
  });

  it("narrows the list to client errors and to the key, kept in the address", async () => {
    await page.getByLabel("Status", { exact: true }).selectOption({ label: "Client errors (4xx)" });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(statuses).toEqual(["422"]);
    expect(new URL(page.url()).search).toBe("?status=4xx");

    await page.getByLabel("Credential").selectOption({ label: KEY_NAME });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("credential_id")).toBe(keyId);
    await expect.poll(() => rows().evaluateAll((found) => found.map((element) => element.getAttribute("data-request-id")))).toEqual([refused.request_id]);

    // An exact code typed in wins over the class.
    await page.getByLabel("Status code").fill("202");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(statuses).toEqual(["202"]);
    await page.getByLabel("Status code").fill("");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(statuses).toEqual(["422"]);
  });

  it("opens the refused request's page: its field error, the problem as JSON, the key", async () => {
    await page.getByRole("link", { name: `Details of ${refused.request_id}` }).click();
    await expect.poll(() => heading().textContent()).toBe("POST /v1/messages");
    expect(new URL(page.url()).pathname).toBe(`/developers/request-log/${refused.request_id}`);

    const [fieldError] = refused.errors;
    expect(fieldError?.pointer).toBe("/to");
    const fields = page.getByTestId("request-log-field-errors");
    expect(await fields.textContent()).toBe(`/to: ${fieldError!.message}`);
    expect(await page.getByTestId("request-log-problem-title").textContent()).toBe(refused.title);
    const json = JSON.parse((await page.getByTestId("request-log-problem-json").textContent()) ?? "") as unknown;
    expect(json).toMatchObject({ code: "validation_failed", request_id: refused.request_id, errors: [{ pointer: "/to" }] });
    expect(await page.getByTestId("request-log-status").textContent()).toBe("422");
    expect(await page.getByText(refused.request_id!, { exact: true }).count()).toBe(1);
    await screenshot(page, "request-log-entry");

    const key = page.getByTestId("request-log-credential");
    await expect.poll(() => key.textContent()).toBe(`API key ${KEY_NAME} ${keyId}`);
    expect(await key.getByRole("link", { name: KEY_NAME }).getAttribute("href")).toBe("/developers/api-keys");
  });

  it("says why a request may not be in the log when it is not found", async () => {
    await page.goto("/developers/request-log/req_00000000000000000000000000");
    const refusal = page.getByRole("alert");
    await expect.poll(() => refusal.textContent()).toContain("Could not load this request");
    expect(await refusal.textContent()).toContain("not_found");
    expect(await page.getByTestId("request-log-not-found").textContent()).toContain("about a second");
    // A read of the log is not in it: its request id leads nowhere, so it is not a link.
    expect(await refusal.getByRole("link").count()).toBe(0);
  });

  it("links the request id of a problem the dashboard showed to its entry", async () => {
    await page.goto("/developers/api-keys");
    await page.getByRole("button", { name: `Edit ${KEY_NAME}` }).click();
    const dialog = page.getByRole("dialog", { name: "Edit API key" });
    await dialog.getByLabel("Allowed IP addresses").fill("10.0.0.300");
    await dialog.getByRole("button", { name: "Save changes" }).click();
    const link = dialog.getByRole("alert").getByRole("link", { name: /^req_/ });
    await link.waitFor();
    const requestId = (await link.textContent()) ?? "";
    expect(await link.getAttribute("href")).toBe(`/developers/request-log/${requestId}`);

    await flushLog();
    await link.click();
    await expect.poll(() => heading().textContent()).toBe(`PATCH /v1/api-keys/${keyId}`);
    expect(await page.getByTestId("request-log-status").textContent()).toBe("422");
    await expect.poll(() => page.getByTestId("request-log-credential").textContent()).toBe(`Member ${OWNER.email} ${ownerId}`);
    expect(await page.getByTestId("request-log-field-errors").textContent()).toContain("/restrictions/allowed_ips/0");
  });

  it("raised no script error along the way", () => {
    // Chromium logs every 4xx answer (the unknown request's 404, the edit's 422); nothing else.
    expect(harness.opened.errors.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line))).toEqual([]);
  });

  it("does not offer the log to a viewer, and shows them the refusal if they go there", async () => {
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      const seen = viewer.page;
      await seen.goto("/developers/api-keys");
      await seen.getByTestId("api-key-row").first().waitFor();
      const navigation = seen.getByRole("navigation", { name: "Main" });
      expect(await navigation.getByRole("link", { name: "API keys" }).count()).toBe(1);
      expect(await navigation.getByRole("link", { name: "Request log" }).count()).toBe(0);

      await seen.goto("/developers/request-log");
      const refusal = seen.getByRole("alert");
      await expect.poll(() => refusal.textContent()).toContain("You don't have permission to do this");
      expect(await refusal.textContent()).toContain("insufficient_role");
      // Their request ids lead to nothing they may read.
      expect(await refusal.getByRole("link").count()).toBe(0);
      expect(await seen.getByTestId("request-log-row").count()).toBe(0);
      await screenshot(seen, "request-log-refused");

      await seen.goto(`/developers/request-log/${refused.request_id}`);
      await expect.poll(() => seen.getByRole("alert").textContent()).toContain("insufficient_role");
      // The browser's own lines for the two refused requests, and nothing from the page.
      expect(viewer.errors).toEqual([
        expect.stringMatching(/Failed to load resource: the server responded with a status of 403/),
        expect.stringMatching(/Failed to load resource: the server responded with a status of 403/),
      ]);
    } finally {
      await viewer.context.close();
    }
  });
});
