import { Mailroom } from "mailroom";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedUp, type DashboardSession } from "../helpers/dashboard-session.js";
import { launchBrowser, openPage, screenshot, signInThroughPage, type OpenedPage } from "../helpers/browser.js";
import { startDnsServer, type DnsServer } from "../helpers/dns-server.js";
import { startTestServer, type TestServer } from "../helpers/http-server.js";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink.js";

/**
 * The suppression list in real Chromium against the real server: add addresses by hand, filter,
 * page, remove; then a real hard bounce in live. For that, the server's resolver is a DNS server
 * on loopback and the recipients' MX is an SMTP server on loopback that refuses one address with
 * 550 5.1.1, so the live message never leaves the machine. Each `it` runs on from where the
 * previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const SENDING_DOMAIN = "acme.example";
const RECIPIENT_DOMAIN = "example.net";
const GONE = `gone@${RECIPIENT_DOMAIN}`;
const PAGE_SIZE = 25;

describe("the suppression list in the dashboard", () => {
  let dns: DnsServer;
  let sink: SmtpSink;
  let server: TestServer;
  let browser: Browser;
  let opened: OpenedPage;
  let page: Page;
  let session: DashboardSession;
  let workspaceId = "";

  const nav = (name: string) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });
  const heading = () => page.getByRole("heading", { level: 1 });
  const rows = () => page.getByTestId("suppression-row");
  const sdk = async (environment: "live" | "sandbox") =>
    new Mailroom({ apiKey: await session.token(workspaceId, environment), baseUrl: server.baseUrl, maxRetries: 0 });
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
    dns = await startDnsServer();
    sink = await startSmtpSink();
    server = await startTestServer({
      DNS_SERVERS: dns.address,
      SMTP_MX_PORT: String(sink.port),
      SENDING_HOSTNAME: "mta.mailroom.test",
      SMTP_CONNECT_TIMEOUT_MS: "2000",
      SMTP_COMMAND_TIMEOUT_MS: "5000",
    });
    dns.add(`mx1.${RECIPIENT_DOMAIN}`, { type: "A", address: "127.0.0.1" });
    dns.add(RECIPIENT_DOMAIN, { type: "MX", priority: 10, exchange: `mx1.${RECIPIENT_DOMAIN}` });
    ({ session, workspaceId } = await signedUp(server.testApp, { email: OWNER.email, password: OWNER.password }));
    browser = await launchBrowser();
    opened = await openPage(browser, server.baseUrl);
    page = opened.page;
    await signInThroughPage(page, OWNER.email, OWNER.password);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await sink?.close();
    await dns?.close();
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
    const sandbox = await sdk("sandbox");
    expect((await sandbox.suppressions.list()).data.map((suppression) => suppression.email).sort()).toEqual(["ada@example.com", "grace@example.com", "linus@example.com"]);
    expect((await (await sdk("live")).suppressions.list()).data).toEqual([]);
    await screenshot(page, "suppressions");
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
    const sandbox = await sdk("sandbox");
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
    const live = await sdk("live");
    const domain = await live.domains.create({ name: SENDING_DOMAIN });
    for (const record of domain.records) {
      dns.add(record.name, record.type === "MX" ? { type: "MX", priority: record.priority ?? 10, exchange: record.value } : { type: "TXT", value: record.value });
    }
    expect((await live.domains.verify(domain.id)).status).toBe("verified");
    sink.onRcpt((address) => (address === GONE ? { code: 550, message: `5.1.1 <${GONE}>: Recipient address rejected: User unknown` } : undefined));
    const message = await live.messages.create({ from: `Acme <hello@${SENDING_DOMAIN}>`, to: GONE, subject: "Your receipt", html: "<p>Thanks</p>" });
    await server.testApp.drain();
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
    expect((await (await sdk("sandbox")).suppressions.list({ email: "ada@example.com" })).data).toHaveLength(1);
  });

  it("raised no script error along the way", () => {
    expect(opened.errors).toEqual([]);
  });
});
