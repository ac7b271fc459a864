import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import { RECIPIENT_DOMAIN } from "../helpers/live-delivery.js";
import type { SmtpSink } from "../helpers/smtp-sink.js";

/**
 * The suppression list in real Chromium against the real server: add addresses by hand, filter,
 * page, remove; then a real hard bounce in live. For that, the server's resolver is a DNS server
 * on loopback and the recipients' MX is an SMTP server on loopback that refuses one address with
 * 550 5.1.1, so the live message never leaves the machine. Each `it` runs on from where the
 * previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const SENDING_DOMAIN = "acme.example";
const GONE = `gone@${RECIPIENT_DOMAIN}`;
const PAGE_SIZE = 25;

describe("the suppression list in the dashboard", () => {
  let harness: DashboardHarness & { sink: SmtpSink };
  let page: Page;

  const nav = (name: string) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });
  const heading = () => page.getByRole("heading", { level: 1 });
  const rows = () => page.getByTestId("suppression-row");
  const filter = async (values: { reason?: string; email?: string }) => {
    const form = page.getByRole("form", { name: "Filters" });
    await form.getByLabel("Reason").selectOption(values.reason ?? "");
    await form.getByLabel("Email address").fill(values.email ?? "");
    await form.getByRole("button", { name: "Apply filters" }).click();
  };
  const add = async (email: string, reason: string, note = "") => {
    await page.getByRole("button", { name: "Add address" }).click();
    const dialog = page.getByRole("dialog", { name: "Add an address" });
    await dialog.getByLabel("Email address").fill(email);
    await dialog.getByLabel("Reason").selectOption({ label: reason });
    if (note) await dialog.getByLabel("Note (optional)").fill(note);
    await dialog.getByRole("button", { name: "Suppress address" }).click();
    await page.getByTestId("suppression-added").filter({ hasText: email }).waitFor();
  };

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER, sink: true, env: { SENDING_HOSTNAME: "mta.mailroom.test" } });
    page = harness.page;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("explains an empty list: where suppressions come from, and that each environment has its own", async () => {
    await nav("Suppressions").click();
    await expect.poll(() => heading().textContent()).toBe("Suppressions");
    expect(await page.locator(".page-header__description").textContent()).toContain("the sandbox environment no longer sends to");
    const empty = page.locator(".empty--teach");
    await empty.waitFor();
    expect(await empty.textContent()).toContain("No suppressed addresses in sandbox");
    expect(await empty.textContent()).toContain("bounces permanently");
    await screenshot(page, "suppressions-empty");
  });

  it("adds addresses by hand, with a reason and a note", async () => {
    await add("ada@example.com", "Unsubscribe", "Asked by phone");
    await add("grace@example.com", "Manual");
    await add("linus@example.com", "Complaint");
    await expect.poll(() => rows().count()).toBe(3);
    const ada = rows().filter({ hasText: "ada@example.com" });
    expect(await ada.textContent()).toContain("Unsubscribe");
    expect(await ada.textContent()).toContain("Asked by phone");
    expect(await rows().filter({ hasText: "grace@example.com" }).textContent()).toContain("Manual");
    // Suppressed in the API too, for this environment only.
    const sandbox = await harness.sdk("sandbox");
    expect((await sandbox.suppressions.list()).data.map((suppression) => suppression.email).sort()).toEqual(["ada@example.com", "grace@example.com", "linus@example.com"]);
    expect((await (await harness.sdk("live")).suppressions.list()).data).toEqual([]);
    await screenshot(page, "suppressions");
  });

  it("says an address already suppressed was, and changes nothing of it", async () => {
    await add("ada@example.com", "Manual", "Another note");
    const notice = page.getByTestId("suppression-added");
    expect(await notice.textContent()).toMatch(/^ada@example\.com was already suppressed in sandbox \(Unsubscribe, since .+\): nothing was changed\.$/);
    await expect.poll(() => rows().count()).toBe(3);
    const ada = rows().filter({ hasText: "ada@example.com" });
    expect(await ada.textContent()).toContain("Asked by phone");
    expect(await ada.textContent()).not.toContain("Another note");
  });

  it("filters by reason and by address, keeping the filters in the address bar", async () => {
    await filter({ reason: "unsubscribe" });
    await page.waitForURL((url) => url.searchParams.get("reason") === "unsubscribe");
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().textContent()).toContain("ada@example.com");

    // The whole address, whatever its capitals.
    await filter({ email: "GRACE@example.com" });
    await page.waitForURL((url) => url.searchParams.get("email") === "GRACE@example.com" && !url.searchParams.has("reason"));
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().textContent()).toContain("grace@example.com");

    await filter({ reason: "hard_bounce" });
    await page.getByText("No suppressions match these filters.").waitFor();

    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.waitForURL((url) => url.search === "");
    await expect.poll(() => rows().count()).toBe(3);
  });

  it("removes an address after confirmation, warning first when its recipient complained", async () => {
    await page.getByRole("button", { name: "Remove linus@example.com" }).click();
    const dialog = page.getByRole("dialog", { name: "Remove suppression?" });
    expect(await dialog.textContent()).toContain("will be sent to linus@example.com again");
    expect(await dialog.getByRole("note").textContent()).toContain("marked your mail as spam");
    await dialog.getByRole("button", { name: "Remove suppression" }).click();
    await expect.poll(() => rows().count()).toBe(2);
    expect(await rows().filter({ hasText: "linus@example.com" }).count()).toBe(0);
  });

  it("pages through a long list with Next and Previous", async () => {
    const sandbox = await harness.sdk("sandbox");
    for (let i = 0; i < PAGE_SIZE - 1; i++) await sandbox.suppressions.create({ email: `reader${String(i).padStart(2, "0")}@example.org` });
    await page.reload();
    await expect.poll(() => rows().count()).toBe(PAGE_SIZE);
    const pager = page.getByRole("navigation", { name: "Suppressions pages" });
    await pager.getByRole("button", { name: "Next" }).click();
    await expect.poll(() => rows().count()).toBe(1);
    expect(await pager.textContent()).toContain("Page 2");
    await pager.getByRole("button", { name: "Previous" }).click();
    await expect.poll(() => rows().count()).toBe(PAGE_SIZE);
  });

  it("shows a live hard bounce in live only, linked to the message it came from, and warns before removing it", async () => {
    // A verified sending domain, its records published on the loopback DNS server as the API gives them.
    const live = await harness.sdk("live");
    const domain = await live.domains.create({ name: SENDING_DOMAIN });
    for (const record of domain.records) {
      harness.dns.add(record.name, record.type === "MX" ? { type: "MX", priority: record.priority ?? 10, exchange: record.value } : { type: "TXT", value: record.value });
    }
    expect((await live.domains.verify(domain.id)).status).toBe("verified");
    harness.sink.onRcpt((address) => (address === GONE ? { code: 550, message: `5.1.1 <${GONE}>: Recipient address rejected: User unknown` } : undefined));
    const message = await live.messages.create({ from: `Acme <hello@${SENDING_DOMAIN}>`, to: GONE, subject: "Your receipt", html: "<p>Thanks</p>" });
    await harness.server.testApp.drain();
    expect((await live.messages.get(message.id)).status).toBe("bounced");

    await page.getByRole("switch", { name: "Live mode" }).click();
    await page.getByTestId("live-banner").waitFor();
    await expect.poll(() => page.locator(".page-header__description").textContent()).toContain("the live environment no longer sends to");
    await expect.poll(() => rows().count()).toBe(1);
    const row = rows().first();
    expect(await row.textContent()).toContain(GONE);
    expect(await row.textContent()).toContain("Hard bounce");
    expect(await row.textContent()).toContain("5.1.1");
    await screenshot(page, "suppressions-live");

    await row.getByRole("link", { name: `View message ${message.id}` }).click();
    await page.waitForURL(`**/messages/${message.id}`);
    await expect.poll(() => heading().textContent()).toBe("Your receipt");
    expect(await page.getByTestId("recipient-row").textContent()).toContain("bounced");
    await page.goBack();
    await expect.poll(() => rows().count()).toBe(1);

    await page.getByRole("button", { name: `Remove ${GONE}` }).click();
    const dialog = page.getByRole("dialog", { name: "Remove suppression?" });
    expect(await dialog.getByTestId("hard-bounce-warning").textContent()).toContain("bounced permanently");
    await screenshot(page, "suppression-remove-hard-bounce");
    await dialog.getByRole("button", { name: "Remove suppression" }).click();
    await page.locator(".empty--teach").filter({ hasText: "No suppressed addresses in live" }).waitFor();
    expect((await live.suppressions.list()).data).toEqual([]);
    // The sandbox list was not touched.
    expect((await (await harness.sdk("sandbox")).suppressions.list({ email: "ada@example.com" })).data).toHaveLength(1);
  });

  it("raised no script error along the way", () => {
    expect(harness.opened.errors).toEqual([]);
  });
});
