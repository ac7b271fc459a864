import type { Mailroom } from "mailroom";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import { templatePage } from "./template-page.js";

/**
 * Where the dashboard puts its feedback and the keyboard's focus, in real Chromium against the real
 * server: field problems shown once they are the member's business (after a try, or a touch) and
 * gone once the field is changed, an action's result beside its button, focus kept after an
 * action, a disabled control's reason in words (never a tooltip), the message log's page in the
 * address, and the HTML editor's closing tags typed key by key. Each `it` opens the page it needs.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const FROM = "Acme <hello@acme.example>";
const SLUG = "order-shipped";
const TEMPLATE = { slug: SLUG, name: "Order shipped", subject: "Your order", html: "<p>Your order is on its way. {{ coupon }}</p>" };
const HOUR = 3_600_000;
const MINUTE = 60_000;

describe("feedback and focus in the dashboard's forms", () => {
  let harness: DashboardHarness;
  let page: Page;
  let sandbox: Mailroom;
  const { editor } = templatePage(() => page);

  /** What has the keyboard's focus: "body" when nothing does. */
  const focused = () =>
    page.evaluate(() => {
      const element = document.activeElement;
      if (element === null || element === document.body) return "body";
      return element.getAttribute("aria-label") ?? element.textContent?.trim() ?? element.tagName;
    });

  /** Why `control` is disabled: words shown on the page, tied to it with aria-describedby, and no tooltip. */
  async function disabledReason(control: Locator): Promise<Locator> {
    expect(await control.isDisabled()).toBe(true);
    expect(await control.getAttribute("title")).toBeNull();
    const describedBy = (await control.getAttribute("aria-describedby")) ?? "";
    expect(describedBy).not.toBe("");
    const reason = page.locator(`[id="${describedBy}"]`);
    expect(await reason.isVisible()).toBe(true);
    return reason;
  }

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
    page = harness.page;
    sandbox = await harness.sdk("sandbox");
    // Published, so that Send a test can send it; its content uses coupon without declaring it.
    await sandbox.templates.create(TEMPLATE);
    await sandbox.templates.publish(SLUG);
  });

  afterAll(async () => {
    await harness?.close();
  });

  describe("Send a test", () => {
    const dialog = () => page.getByRole("dialog", { name: "Send a test" });
    const from = () => dialog().getByLabel("From (optional)", { exact: true });
    const fromErrors = () => dialog().locator(".field").filter({ has: page.getByLabel("From (optional)", { exact: true }) }).locator(".field__errors");
    const status = () => dialog().getByTestId("test-send-status");

    async function openDialog(): Promise<void> {
      await page.goto(`/templates/${SLUG}`);
      await page.getByRole("heading", { level: 1, name: "Order shipped" }).waitFor();
      await page.getByRole("button", { name: "Send a test" }).click();
      await dialog().waitFor();
    }

    it("shows the missing sender only once Send is pressed, not on opening", async () => {
      await openDialog();
      // The check has answered (the workspace has no default sender), but nothing was tried yet.
      await expect.poll(() => status().textContent(), { timeout: 15_000 }).toBe("Fill in what is needed, then press Send.");
      expect(await fromErrors().count()).toBe(0);
      expect(await from().getAttribute("aria-invalid")).toBeNull();
      expect(await dialog().getByText("This would not be sent").count()).toBe(0);

      await dialog().getByRole("button", { name: "Send", exact: true }).click();
      await expect.poll(() => fromErrors().textContent()).toBe("is required: this workspace has no default sender (default_from)");
      expect(await from().getAttribute("aria-invalid")).toBe("true");
      expect(await status().textContent()).toBe("It would not be sent: see the problems.");
      expect(await dialog().getByRole("button", { name: "Send", exact: true }).isDisabled()).toBe(true);
      expect((await sandbox.messages.list()).data).toEqual([]);
      await screenshot(page, "template-test-send-tried");
    });

    it("shows a field's problem once the field has been visited", async () => {
      await openDialog();
      await expect.poll(() => status().textContent(), { timeout: 15_000 }).toBe("Fill in what is needed, then press Send.");
      await from().focus();
      await page.keyboard.press("Tab");
      await expect.poll(() => fromErrors().textContent()).toBe("is required: this workspace has no default sender (default_from)");
      await from().fill(FROM);
      await expect.poll(() => status().textContent(), { timeout: 15_000 }).toMatch(/^Checked/);
      expect(await fromErrors().count()).toBe(0);
      await dialog().getByRole("button", { name: "Cancel" }).click();
    });
  });

  it("clears an API key field's problem once that field is changed, not when another one is", async () => {
    await page.goto("/developers/api-keys");
    await page.getByRole("button", { name: "Create API key" }).click();
    const dialog = page.getByRole("dialog", { name: "Create API key" });
    const ips = dialog.getByLabel("Allowed IP addresses");
    const ipErrors = () => dialog.locator(".field").filter({ has: page.getByLabel("Allowed IP addresses", { exact: true }) }).locator(".field__errors");
    await dialog.getByLabel("Name").fill("CI");
    await ips.fill("127.0.0.1, 10.0.0.300");
    await dialog.getByRole("button", { name: "Create key" }).click();
    await expect.poll(() => ips.getAttribute("aria-invalid")).toBe("true");
    expect(await ipErrors().textContent()).toContain('"10.0.0.300" is not an IP address or CIDR range');

    // Another field changed: the problem is still this one's.
    await dialog.getByLabel("Name").fill("CI server");
    expect(await ips.getAttribute("aria-invalid")).toBe("true");
    expect(await ipErrors().count()).toBe(1);

    await ips.fill("127.0.0.1, 10.0.0.30");
    await expect.poll(() => ipErrors().count()).toBe(0);
    expect(await ips.getAttribute("aria-invalid")).toBeNull();
    // The form's error box still says what the last press was refused for.
    expect(await dialog.getByText("Could not create the key").count()).toBe(1);
    await screenshot(page, "api-key-create-problem-cleared");
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });

  it("shows each problem of a refused API key once: beside its field, or in the error box when no field shows it", async () => {
    await page.goto("/developers/api-keys");
    await page.getByRole("button", { name: "Create API key" }).click();
    const dialog = page.getByRole("dialog", { name: "Create API key" });
    const name = dialog.getByLabel("Name");
    const ips = dialog.getByLabel("Allowed IP addresses");
    const errorsOf = (label: string) => dialog.locator(".field").filter({ has: page.getByLabel(label, { exact: true }) }).locator(".field__errors");
    const alert = dialog.getByRole("alert");
    // Spaces pass the browser's `required`; trimmed, the name is empty, which the server refuses.
    await name.fill("   ");
    await dialog.getByRole("button", { name: "Create key" }).click();
    await expect.poll(() => name.getAttribute("aria-invalid")).toBe("true");
    const nameProblem = (await errorsOf("Name").textContent()) ?? "";
    expect(nameProblem).not.toBe("");
    expect(nameProblem).not.toContain("/name");
    // The box says the press was refused, with its code and request id, and not the problem again.
    const said = (await alert.textContent()) ?? "";
    expect(said).toContain("Could not create the key");
    expect(said).toContain("validation_failed");
    expect(said).not.toContain("/name");
    expect(said).not.toContain(nameProblem);

    // A problem about something the form does not show (domain limits, offered only for sending
    // access) has no field to go beside: the box lists it, with its pointer.
    await page.route("**/v1/api-keys", (route) =>
      route.fulfill({
        status: 422,
        contentType: "application/problem+json",
        headers: { "request-id": "req_crafted_for_the_test" },
        body: JSON.stringify({
          type: "https://mailroom.dev/problems/validation_failed",
          title: "Validation failed",
          status: 422,
          code: "validation_failed",
          request_id: "req_crafted_for_the_test",
          errors: [
            { location: "body", pointer: "/restrictions/sender_domains/0", message: "is not a domain name" },
            { location: "body", pointer: "/name", message: "is already taken by another key" },
          ],
        }),
      }),
    );
    try {
      await name.fill("CI");
      await ips.fill("");
      await dialog.getByRole("button", { name: "Create key" }).click();
      await expect.poll(() => errorsOf("Name").textContent()).toBe("is already taken by another key");
      await expect.poll(() => alert.textContent()).toContain("/restrictions/sender_domains/0 is not a domain name");
      expect(await alert.textContent()).not.toContain("is already taken by another key");
      expect(await ips.getAttribute("aria-invalid")).toBeNull();
    } finally {
      await page.unroute("**/v1/api-keys");
    }
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });

  it("shows the server's problem with Settings' default sender under it, until it is changed", async () => {
    await page.goto("/settings");
    const from = page.getByLabel("Default sender", { exact: true });
    const fromErrors = () => page.locator(".field").filter({ has: page.getByLabel("Default sender", { exact: true }) }).locator(".field__errors");
    await from.fill("not an address");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => from.getAttribute("aria-invalid")).toBe("true");
    const message = (await fromErrors().textContent()) ?? "";
    expect(message).not.toBe("");
    expect(message).not.toContain("/default_from");
    expect(((await from.getAttribute("aria-describedby")) ?? "").split(" ")).toContain(await fromErrors().getAttribute("id"));
    // The error box says the save was refused, without saying the field's problem again.
    const alert = page.getByRole("alert").filter({ hasText: "Could not save the workspace" });
    expect(await alert.textContent()).not.toContain("/default_from");
    expect(await alert.textContent()).not.toContain(message);

    await from.fill("");
    await expect.poll(() => fromErrors().count()).toBe(0);
    expect(await from.getAttribute("aria-invalid")).toBeNull();
  });

  it("says the result of Replay failed events beside its button, politely", async () => {
    const webhook = await sandbox.webhooks.create({ url: "http://127.0.0.1:9/hooks", event_types: ["message.delivered"] });
    await page.goto(`/webhooks/${webhook.id}`);
    const form = page.getByRole("form", { name: "Replay failed events" });
    await form.getByRole("button", { name: "Replay failed events" }).click();
    const result = form.getByRole("status");
    await expect.poll(() => result.textContent()).toBe("0 failed deliveries are queued again.");
    expect(await page.getByTestId("redeliver-result").count()).toBe(0);
  });

  describe("focus after an action", () => {
    it("stays on Reschedule once the message is moved", async () => {
      const now = harness.server.testApp.clock.now();
      const message = await sandbox.messages.create({ from: FROM, to: "lin@example.com", subject: "Reminder", html: "<p>Hi</p>", scheduled_at: new Date(now + HOUR).toISOString() });
      await page.goto(`/messages/${message.id}`);
      await page.getByRole("heading", { level: 1, name: "Reminder" }).waitFor();
      const form = page.getByRole("form", { name: "Reschedule" });
      const target = Math.floor((now + 3 * HOUR) / MINUTE) * MINUTE;
      const local = await page.evaluate((ms) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16), target);
      await form.getByLabel("New time").fill(local);
      await form.getByRole("button", { name: "Reschedule", exact: true }).focus();
      await page.keyboard.press("Enter");
      await expect.poll(() => page.getByTestId("reschedule-result").textContent()).toMatch(/^Rescheduled for /);
      expect(await focused()).toBe("Reschedule");
    });

    it("moves to the line saying the message was sent when Send now's answer takes the Schedule card away", async () => {
      const message = await sandbox.messages.create({ from: FROM, to: "lin@example.com", subject: "Sent at once", html: "<p>Hi</p>", scheduled_at: new Date(harness.server.testApp.clock.now() + HOUR).toISOString() });
      await page.goto(`/messages/${message.id}`);
      await page.getByRole("heading", { level: 1, name: "Sent at once" }).waitFor();
      // A worker may take a message the moment it is due, before the answer reads it back: here the
      // worker runs between the server's change and the answer, which then says delivered, not scheduled.
      await page.route(`**/v1/messages/${message.id}/reschedule`, async (route) => {
        const response = await route.fetch();
        await harness.server.testApp.drain();
        await route.fulfill({ response, json: await sandbox.messages.get(message.id) });
      });
      try {
        await page.getByRole("button", { name: "Send now" }).focus();
        await page.keyboard.press("Enter");
        await expect.poll(() => page.getByRole("form", { name: "Reschedule" }).count()).toBe(0);
        const line = page.getByTestId("message-outcome");
        expect(await line.textContent()).toBe("Sent now: the message is delivered.");
        // In a live region (the page's, there from the start).
        expect(await line.evaluate((element) => element.parentElement?.getAttribute("role"))).toBe("status");
        await expect.poll(focused).toBe("Sent now: the message is delivered.");
      } finally {
        await page.unroute(`**/v1/messages/${message.id}/reschedule`);
      }
    });

    it("moves to the line saying the message was canceled once Cancel message takes its own button away", async () => {
      const message = await sandbox.messages.create({ from: FROM, to: "lin@example.com", subject: "Called off", html: "<p>Hi</p>", scheduled_at: new Date(harness.server.testApp.clock.now() + HOUR).toISOString() });
      await page.goto(`/messages/${message.id}`);
      await page.getByRole("heading", { level: 1, name: "Called off" }).waitFor();
      await page.getByRole("button", { name: "Cancel message" }).focus();
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog", { name: "Cancel this message?" });
      await dialog.getByRole("button", { name: "Cancel message" }).focus();
      await page.keyboard.press("Enter");
      await expect.poll(() => page.getByRole("button", { name: "Cancel message" }).count()).toBe(0);
      expect(await page.getByTestId("message-outcome").evaluate((element) => element.parentElement?.getAttribute("role"))).toBe("status");
      await expect.poll(focused).toBe("Canceled: recipients not yet delivered will not get it.");
    });

    it("moves to the declared variable's row after Declare", async () => {
      await page.goto(`/templates/${SLUG}`);
      await page.getByRole("heading", { level: 1, name: "Order shipped" }).waitFor();
      await page.getByRole("button", { name: "Declare coupon" }).focus();
      await page.keyboard.press("Enter");
      await expect.poll(focused).toBe("Variable 1 name");
    });

    it("stays on Invite once the invitation is created", async () => {
      await page.goto("/settings");
      const form = page.getByRole("form", { name: "Invite a member" });
      await form.getByLabel("Email address").fill("lin@acme.example");
      await form.getByRole("button", { name: "Invite", exact: true }).focus();
      await page.keyboard.press("Enter");
      await page.getByTestId("invitation-url").waitFor();
      expect(await focused()).toBe("Invite");
    });
  });

  it("says in words, tied to the button, why the last owner cannot leave", async () => {
    await page.goto("/settings");
    const reason = await disabledReason(page.getByRole("button", { name: "Leave workspace" }));
    expect(await reason.textContent()).toBe("A workspace needs at least one owner: make someone else an owner first.");
  });

  it("ties the last owner's disabled role select to the same words, shown once, and no tooltip", async () => {
    await page.goto("/settings");
    const role = page.getByLabel(`Role for ${OWNER.email}`);
    await role.waitFor();
    const reason = await disabledReason(role);
    expect(await page.getByRole("button", { name: "Leave workspace" }).getAttribute("aria-describedby")).toBe(await reason.getAttribute("id"));
    expect(await reason.textContent()).toBe("A workspace needs at least one owner: make someone else an owner first.");
    expect(await page.getByText("A workspace needs at least one owner").count()).toBe(1);
  });

  it("says in words, tied to Publish, why a template has nothing to publish, and no tooltip", async () => {
    await sandbox.templates.create({ slug: "receipt", name: "Receipt", subject: "Your receipt", html: "<p>Thank you.</p>" });
    await sandbox.templates.publish("receipt");
    await page.goto("/templates/receipt");
    await page.getByRole("heading", { level: 1, name: "Receipt" }).waitFor();
    const publish = page.getByRole("button", { name: "Publish", exact: true });
    await expect.poll(() => publish.isDisabled()).toBe(true);
    const reason = await disabledReason(publish);
    expect(await reason.textContent()).toBe("None: the editors show the published version, so there is nothing to publish.");
  });

  it("says in words, tied to a required variable's disabled Default, why it has none, and no tooltip", async () => {
    await sandbox.templates.create({
      slug: "reminder",
      name: "Reminder",
      subject: "A reminder",
      html: "<p>Hi {{ first_name }}, see you {{ day }}.</p>",
      variables: [
        { name: "first_name", type: "string", required: true },
        { name: "day", type: "string", required: false },
      ],
    });
    await page.goto("/templates/reminder");
    await page.getByRole("heading", { level: 1, name: "Reminder" }).waitFor();
    const reason = await disabledReason(page.getByLabel("Variable 1 default"));
    expect(await reason.textContent()).toBe("None: a required variable is given by every send.");
    // An optional variable's Default is open, and names no reason.
    const optional = page.getByLabel("Variable 2 default");
    expect(await optional.isDisabled()).toBe(false);
    expect(await optional.getAttribute("aria-describedby")).toBeNull();
    expect(await page.getByText("None: a required variable is given by every send.").count()).toBe(1);
  });

  it("tells an admin in words, once, why owners' roles are not theirs to change", async () => {
    const admin = await harness.openAsInvitedMember({ name: "Lin Admin", email: "lin.admin@acme.example", password: "admin passphrase here" }, "admin");
    try {
      const { page: seen } = admin;
      await seen.goto("/settings");
      const owner = seen.getByTestId("member-row").filter({ hasText: OWNER.email });
      await owner.waitFor();
      // The owner's role is text, not a select, and the row has no Remove.
      expect(await seen.getByLabel(`Role for ${OWNER.email}`).count()).toBe(0);
      expect(await owner.getByRole("button", { name: `Remove ${OWNER.email}` }).count()).toBe(0);
      const note = seen.getByTestId("members-owner-note");
      expect(await note.isVisible()).toBe(true);
      expect(await note.textContent()).toBe("Only an owner can change an owner's role or remove an owner.");
      expect(await seen.getByText("Only an owner can change").count()).toBe(1);
      expect(await owner.locator("[title]").count()).toBe(0);
      // The note below admin is not theirs: they do change roles.
      expect(await seen.getByTestId("members-read-only-note").count()).toBe(0);
      expect(admin.errors).toEqual([]);
    } finally {
      await admin.context.close();
    }
  });

  it("keeps the message log's page in the address, through a reload, Back and Forward", async () => {
    const rows = () => page.getByTestId("message-row");
    const pageLabel = () => page.getByRole("navigation", { name: "Messages pages" }).locator(".pager__page").textContent();
    await sandbox.messages.createBatch({
      messages: Array.from({ length: 27 }, (_, index) => ({ from: FROM, to: "delivered@simulator.test", subject: `Bulk ${index + 1}`, html: "<p>Hi</p>", tags: ["bulk"] })),
    });
    await page.goto("/messages?tag=bulk");
    await expect.poll(() => rows().count()).toBe(25);
    await page.getByRole("button", { name: "Next" }).click();
    await expect.poll(() => rows().count()).toBe(2);
    const second = new URL(page.url());
    expect(second.searchParams.get("tag")).toBe("bulk");
    expect(second.searchParams.getAll("page")).toHaveLength(1);

    await page.reload();
    await expect.poll(() => rows().count()).toBe(2);
    expect(await pageLabel()).toBe("Page 2");
    expect(await page.getByLabel("Tag").inputValue()).toBe("bulk");

    await page.goBack();
    await expect.poll(() => rows().count()).toBe(25);
    expect(await pageLabel()).toBe("Page 1");
    await page.goForward();
    await expect.poll(() => rows().count()).toBe(2);
    await page.getByRole("button", { name: "Previous" }).click();
    await expect.poll(() => rows().count()).toBe(25);
    expect(new URL(page.url()).search).toBe("?tag=bulk");
  });

  it("starts the message log on its first page, filters kept, when the environment is switched", async () => {
    const rows = () => page.getByTestId("message-row");
    const pageLabel = () => page.getByRole("navigation", { name: "Messages pages" }).locator(".pager__page").textContent();
    await page.goto("/messages?tag=bulk");
    await expect.poll(() => rows().count()).toBe(25);
    await page.getByRole("button", { name: "Next" }).click();
    await expect.poll(() => rows().count()).toBe(2);

    // A sandbox cursor in live would list only live mail older than that sandbox message.
    await page.getByTestId("env-switch").click();
    await expect.poll(() => page.getByTestId("env-badge").textContent()).toBe("Live");
    await expect.poll(() => new URL(page.url()).search).toBe("?tag=bulk");
    await page.getByTestId("env-switch").click();
    await expect.poll(() => rows().count()).toBe(25);
    expect(await pageLabel()).toBe("Page 1");
    expect(new URL(page.url()).search).toBe("?tag=bulk");
  });

  it("keeps filter values typed but not applied while the message log is paged", async () => {
    const rows = () => page.getByTestId("message-row");
    const filters = page.getByRole("form", { name: "Filters" });
    const recipient = filters.getByLabel("Recipient", { exact: true });
    const status = filters.getByLabel("Status", { exact: true });
    await sandbox.messages.createBatch({
      messages: Array.from({ length: 26 }, (_, index) => ({ from: FROM, to: "delivered@simulator.test", subject: `Typed ${index + 1}`, html: "<p>Hi</p>", tags: ["typed"] })),
    });
    await page.goto("/messages?tag=typed");
    await expect.poll(() => rows().count()).toBe(25);
    await recipient.fill("lin@example.com");
    await status.selectOption("delivered");

    await page.getByRole("button", { name: "Next" }).click();
    await expect.poll(() => rows().count()).toBe(1);
    expect(await recipient.inputValue()).toBe("lin@example.com");
    expect(await status.inputValue()).toBe("delivered");
    await page.getByRole("button", { name: "Previous" }).click();
    await expect.poll(() => rows().count()).toBe(25);
    expect(await recipient.inputValue()).toBe("lin@example.com");
    expect(await filters.getByLabel("Tag", { exact: true }).inputValue()).toBe("typed");

    // Applied, they are the address's; Back to the view without them shows its own filters again.
    await filters.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => new URL(page.url()).search).toBe("?status=delivered&recipient=lin%40example.com&tag=typed");
    await page.goBack();
    await expect.poll(() => recipient.inputValue()).toBe("");
    expect(await status.inputValue()).toBe("");
  });

  it("moves the keyboard's focus through a template's editors with Tab and Shift-Tab, saving no draft", async () => {
    await sandbox.templates.create({ slug: "tab-order", name: "Tab order", subject: "Hello", html: "<p>Hi</p>", publish: true });
    await page.goto("/templates/tab-order");
    await page.getByRole("heading", { level: 1, name: "Tab order" }).waitFor();
    // The Layout select follows the Subject, then the HTML editor.
    const layout = page.getByRole("combobox", { name: "Layout", exact: true });
    const hasFocus = (control: Locator) => control.evaluate((element) => element === document.activeElement);
    await editor("Subject").click();
    await page.keyboard.press("Tab");
    expect(await hasFocus(layout)).toBe(true);
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("HTML");
    await page.keyboard.press("Tab");
    expect(await focused()).not.toBe("HTML");
    await page.keyboard.press("Shift+Tab");
    expect(await focused()).toBe("HTML");
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Shift+Tab");
    expect(await focused()).toBe("Subject");
    await page.keyboard.press("Shift+Tab");
    expect(await focused()).not.toBe("Subject");
    // A draft is saved 600 ms after an edit: past that, nothing was.
    await page.waitForTimeout(1_500);
    expect(await editor("Subject").textContent()).toBe("Hello");
    expect(await sandbox.templates.get("tab-order")).toMatchObject({ has_draft: false, subject: "Hello", html: "<p>Hi</p>" });
    expect(await page.locator(".template-summary").textContent()).toContain("None: the editors show the published version");
  });

  it("does not double a closing HTML tag typed after the editor closed it", async () => {
    await page.goto(`/templates/${SLUG}`);
    const html = editor("HTML");
    await html.click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.press("Delete");
    await page.keyboard.type("<p>hi</p>", { delay: 30 });
    expect(await html.textContent()).toBe("<p>hi</p>");
    await page.keyboard.type("<div><b>bold</b></div>", { delay: 30 });
    expect(await html.textContent()).toBe("<p>hi</p><div><b>bold</b></div>");
    expect(harness.opened.errors.filter((error) => !error.includes("status of 422"))).toEqual([]);
  });
});
