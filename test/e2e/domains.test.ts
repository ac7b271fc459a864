import { UnprocessableEntityError } from "mailroom";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { screenshot } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import type { DnsRecord } from "../helpers/dns-server.js";

/**
 * A sending domain from "Add domain" to "verified", in real Chromium against the real server,
 * whose resolver is a real DNS server on loopback (DNS_SERVERS): the records are published there
 * exactly as the page's Copy buttons give them, as a person would paste them at their DNS
 * provider. Then live mail from the domain counts on the overview against the monthly quota set
 * in Settings. Its DKIM keys are rotated: the new keys' records join the table while the current
 * keys sign, and the first Verify that finds them all switches signing to them. Then its (new) RSA
 * DKIM record is removed from the DNS server: Verify finds it missing,
 * the domain keeps sending through its grace period, fails once the server's clock is past it, and
 * is verified again when the record is back; meanwhile the overview warns of it, one line that links
 * to the domain's page. The worker does not run (test/helpers/http-server.ts),
 * so only Verify checks the records, and the recipient's domain has no records on this DNS server,
 * so live messages stay queued and nothing leaves the machine. Each `it` runs on from where the
 * previous one left the page.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery", workspace_name: "Acme Mail" };
const VIEWER = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const DOMAIN = "acme.example";
const RETURN_PATH = "bounce";
const SENDING_HOSTNAME = "mail.mailroom.test";
const QUOTA = 50_000;
const HOUR_MS = 60 * 60 * 1000;
// The server's default DOMAIN_GRACE_HOURS, which this test's server keeps.
const GRACE_MS = 72 * HOUR_MS;

interface PublishedRecord {
  purpose: string;
  type: "TXT" | "MX";
  name: string;
  value: string;
  priority: number | null;
}

describe("sending domains in the dashboard, verified on a real DNS server", () => {
  let harness: DashboardHarness;
  let page: Page;
  let domainPath = "";
  const records: PublishedRecord[] = [];

  const nav = (name: string) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });
  const heading = () => page.getByRole("heading", { level: 1 });
  const recordRows = () => page.getByTestId("dns-record-row");
  // By the label exactly: "DKIM" is also in "New DKIM key", and in DMARC's explanation, which
  // follows the DKIM rows.
  const rowsOf = (purpose: string) => recordRows().filter({ has: page.getByTestId("record-purpose").filter({ hasText: new RegExp(`^${purpose}$`) }) });
  const rowOf = (purpose: string, nth = 0) => rowsOf(purpose).nth(nth);
  const statuses = async () => (await page.getByTestId("record-status").locator(".badge").allTextContents()).map((text) => text.trim());
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
  const domainStatus = () => page.getByTestId("domain-status").textContent();
  const healthNotice = () => page.getByTestId("domain-health-notice");
  const rotateButton = () => page.getByRole("button", { name: "Rotate DKIM keys", exact: true });
  const rotationNotice = () => page.getByTestId("dkim-rotation-notice");
  const domainId = () => domainPath.split("/").pop()!;
  const summaryRow = (label: string) => page.locator(".summary__row").filter({ has: page.locator("dt", { hasText: label }) });
  const domainNotices = () => page.getByTestId("domain-notice");
  const envSwitch = () => page.getByRole("switch", { name: "Live mode" });
  /** The overview, once its domains have loaded: only then does "no line" mean every domain is well. */
  const openOverview = async () => {
    await nav("Overview").click();
    await expect.poll(() => heading().textContent()).toBe("Overview");
    await page.locator('[data-testid="domain-notices"][aria-busy="false"]').waitFor({ state: "attached" });
  };
  /** A live message from the domain: accepted, or the error that refused it. */
  const sendLive = async (subject: string) =>
    (await harness.sdk("live")).messages
      .create({ from: `Acme <hello@${DOMAIN}>`, to: "someone@nowhere.test", subject, html: "<p>Hello</p>" })
      .catch((error: unknown) => error);
  /** An instant as the page shows it (lib/format's formatDateTime, in the browser's locale and zone). */
  const shownAs = (iso: string) =>
    page.evaluate((value) => new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" }).format(new Date(value)), iso);
  /** A day as the page shows it (lib/format's formatDate). */
  const shownAsDate = (ms: number) => page.evaluate((value) => new Intl.DateTimeFormat(undefined, { dateStyle: "medium" }).format(new Date(value)), ms);
  const verify = async () => {
    await page.getByRole("button", { name: "Verify", exact: true }).click();
    await page.getByTestId("verify-result").waitFor();
  };

  /** What a person copies from a record's row: its name and value through the Copy buttons. */
  async function copyRecord(row: Locator): Promise<PublishedRecord> {
    await row.getByRole("button", { name: "Copy name" }).click();
    const name = await clipboard();
    await row.getByRole("button", { name: "Copy value" }).click();
    const value = await clipboard();
    const priority = row.getByTestId("record-priority");
    return {
      purpose: (await row.getByTestId("record-purpose").textContent()) ?? "",
      type: (await row.getByTestId("record-type").textContent()) as "TXT" | "MX",
      name,
      value,
      priority: (await priority.count()) > 0 ? Number(await priority.textContent()) : null,
    };
  }

  const asDns = (record: PublishedRecord): DnsRecord =>
    record.type === "MX" ? { type: "MX", priority: record.priority ?? 10, exchange: record.value } : { type: "TXT", value: record.value };

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER, env: { SENDING_HOSTNAME } });
    page = harness.page;
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("has Domains in the navigation, and an empty list that explains what a domain is for and that it serves both environments", async () => {
    await nav("Domains").click();
    await expect.poll(() => heading().textContent()).toBe("Domains");
    expect(await nav("Domains").getAttribute("aria-current")).toBe("page");
    expect(await page.locator(".page-header__description").textContent()).toContain("live and sandbox mail both use them");
    const empty = page.locator(".empty--teach");
    await empty.waitFor();
    expect(await empty.textContent()).toContain("Live mail may only be sent from a verified domain");
    await screenshot(page, "domains-empty");
  });

  it("refuses a name that is not a domain, with the server's explanation under the field", async () => {
    await page.getByRole("button", { name: "Add your first domain" }).click();
    const dialog = page.getByRole("dialog", { name: "Add domain" });
    const name = dialog.getByLabel("Domain", { exact: true });
    await name.fill("not a domain");
    await dialog.getByRole("button", { name: "Add domain" }).click();
    const alert = dialog.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("Could not add the domain");
    expect(await alert.textContent()).toContain("validation_failed");
    // The field says what is wrong with it, and is marked; the box does not say it again.
    await expect.poll(() => name.getAttribute("aria-invalid")).toBe("true");
    const errors = dialog.locator(".field").filter({ has: page.getByLabel("Domain", { exact: true }) }).locator(".field__errors");
    const message = (await errors.textContent()) ?? "";
    expect(message).not.toBe("");
    expect(message).not.toContain("/name");
    expect(((await name.getAttribute("aria-describedby")) ?? "").split(" ")).toContain(await errors.getAttribute("id"));
    expect((await dialog.textContent())!.split(message).length - 1).toBe(1);
    expect(await alert.textContent()).not.toContain("/name");

    // Changed, the field is no longer what was refused.
    await name.fill("acme");
    await expect.poll(() => name.getAttribute("aria-invalid")).toBeNull();
  });

  it("adds the domain and shows each DNS record to publish, with Copy buttons for its name and value", async () => {
    const dialog = page.getByRole("dialog", { name: "Add domain" });
    await dialog.getByLabel("Domain", { exact: true }).fill(DOMAIN);
    await dialog.getByLabel("Return-path subdomain (optional)").fill(RETURN_PATH);
    await dialog.getByRole("button", { name: "Add domain" }).click();

    await page.waitForURL(/\/domains\/dom_[A-Za-z0-9]+$/);
    domainPath = new URL(page.url()).pathname;
    await expect.poll(() => heading().textContent()).toBe(DOMAIN);
    expect(await domainStatus()).toBe("Pending");
    expect(await page.locator(".summary").textContent()).toContain(`${RETURN_PATH}.${DOMAIN}`);

    // The return path's MX and SPF, a DKIM key per selector (RSA and Ed25519), and DMARC.
    await expect.poll(() => recordRows().count()).toBe(5);
    expect(await rowOf("Return path").getByTestId("record-type").textContent()).toBe("MX");
    expect(await rowOf("Return path").getByTestId("record-priority").textContent()).toMatch(/^\d+$/);
    expect(await rowOf("SPF").getByTestId("record-priority").count()).toBe(0);
    expect(await rowOf("Return path").getByTestId("record-value").textContent()).toBe(SENDING_HOSTNAME);
    expect(await rowOf("SPF").getByTestId("record-name").textContent()).toBe(`${RETURN_PATH}.${DOMAIN}`);
    expect(await rowOf("DKIM", 0).getByTestId("record-value").textContent()).toMatch(/^v=DKIM1; k=rsa; p=/);
    expect(await rowOf("DKIM", 1).getByTestId("record-value").textContent()).toMatch(/^v=DKIM1; k=ed25519; p=/);
    expect(await rowOf("DMARC").textContent()).toContain("Recommended");
    expect(await rowOf("SPF").textContent()).toContain("Required");
    expect(await statuses()).toEqual(Array(5).fill("Not checked yet"));
    for (const row of await recordRows().all()) {
      expect(await row.getByRole("button", { name: "Copy name" }).count()).toBe(1);
      expect(await row.getByRole("button", { name: "Copy value" }).count()).toBe(1);
    }

    // A DKIM key is hundreds of characters: Copy gives exactly what the page shows.
    const dkim = rowOf("DKIM", 0);
    await dkim.getByRole("button", { name: "Copy value" }).click();
    await expect.poll(() => dkim.getByRole("status").filter({ hasText: "Copied" }).count()).toBe(1);
    expect(await clipboard()).toBe(await dkim.getByTestId("record-value").textContent());
    await screenshot(page, "domain-added");
  });

  it("verifies with nothing published: every record is missing and the domain stays pending", async () => {
    await verify();
    expect(await page.getByTestId("verify-result").textContent()).toContain("Not verified yet");
    expect(await statuses()).toEqual(Array(5).fill("Missing"));
    expect(await domainStatus()).toBe("Pending");
    // Only a verified domain's keys can be rotated (the server answers domain_not_verified).
    expect(await rotateButton().count()).toBe(0);
    // Never verified: nothing fell out of service, and the server does not check it by itself.
    expect(await healthNotice().count()).toBe(0);
    expect(await summaryRow("Failing since").count()).toBe(0);
    expect(await summaryRow("Next automatic check").count()).toBe(0);
  });

  it("reports a mismatch, with what DNS answered, when a published record differs from what was asked", async () => {
    for (const row of await recordRows().all()) records.push(await copyRecord(row));
    expect(records.map((record) => record.purpose).sort()).toEqual(["DKIM", "DKIM", "DMARC", "Return path", "SPF"]);
    expect(records.find((record) => record.type === "MX")).toMatchObject({ purpose: "Return path", value: SENDING_HOSTNAME });
    // Every required record as copied, but SPF with a value of someone else's; DMARC left out
    // (recommended, not required).
    for (const record of records.filter((record) => record.purpose !== "DMARC")) {
      harness.dns.add(record.name, record.purpose === "SPF" ? { type: "TXT", value: "v=spf1 include:other.example -all" } : asDns(record));
    }

    await verify();
    expect(await page.getByTestId("verify-result").textContent()).toContain("1 required record was not found as expected");
    const spf = rowOf("SPF");
    expect(await spf.getByTestId("record-status").locator(".badge").textContent()).toBe("Mismatch");
    expect(await spf.getByTestId("record-status").textContent()).toContain("Found instead:v=spf1 include:other.example -all");
    expect(await rowOf("DMARC").getByTestId("record-status").textContent()).toContain("Nothing is published at this name yet");
    expect(await rowOf("Return path").getByTestId("record-status").textContent()).toBe("Verified");
    expect(await rowOf("DKIM", 0).getByTestId("record-status").textContent()).toBe("Verified");
    expect(await domainStatus()).toBe("Pending");
    await screenshot(page, "domain-mismatch");
  });

  it("verifies the domain once the SPF record is corrected, record by record", async () => {
    // The SPF record shares its name with the return path's MX: replace the name's records.
    const spf = records.find((record) => record.purpose === "SPF")!;
    const sameName = records.filter((record) => record.name === spf.name && record.purpose !== "SPF");
    harness.dns.set(spf.name, [...sameName.map(asDns), asDns(spf)]);

    await verify();
    expect(await page.getByTestId("verify-result").textContent()).toContain(`${DOMAIN} is verified`);
    expect(await statuses()).toEqual(records.map((record) => (record.purpose === "DMARC" ? "Missing" : "Verified")));
    expect(await domainStatus()).toBe("Verified");
    expect(await page.locator(".summary").textContent()).toContain("4 of 4 verified");
    // A verified domain is looked up again by the server on its own schedule.
    expect(await summaryRow("Next automatic check").count()).toBe(1);
    expect(await summaryRow("Failing since").count()).toBe(0);
    await screenshot(page, "domain-verified");

    await page.getByRole("link", { name: "← Domains" }).click();
    const row = page.getByTestId("domain-row").filter({ hasText: DOMAIN });
    await expect.poll(() => row.locator(".badge").textContent()).toBe("Verified");
    expect(await row.textContent()).toContain("4 of 4 verified");
    await screenshot(page, "domains");
  });

  it("shows the domain to a viewer read-only: the records and their Copy buttons, no Add, Verify, Rotate DKIM keys or Delete", async () => {
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      await viewer.page.goto("/domains");
      await viewer.page.getByTestId("domain-row").waitFor();
      expect(await viewer.page.getByTestId("read-only-note").textContent()).toContain("Admins and owners add, verify and delete them");
      expect(await viewer.page.getByRole("button", { name: "Add domain" }).count()).toBe(0);

      await viewer.page.goto(domainPath);
      await viewer.page.getByTestId("dns-record-row").first().waitFor();
      expect(await viewer.page.getByTestId("dns-record-row").count()).toBe(5);
      expect(await viewer.page.getByRole("button", { name: "Copy value" }).count()).toBe(5);
      expect(await viewer.page.getByRole("button", { name: "Verify", exact: true }).count()).toBe(0);
      expect(await viewer.page.getByRole("button", { name: "Rotate DKIM keys" }).count()).toBe(0);
      expect(await viewer.page.getByRole("button", { name: "Delete domain" }).count()).toBe(0);
      expect(await viewer.page.getByTestId("read-only-note").count()).toBe(1);
      await screenshot(viewer.page, "domain-viewer");
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.context.close();
    }
  });

  it("starts a DKIM key rotation after confirmation: two New DKIM key records to publish, while the current keys go on signing", async () => {
    await page.goto(domainPath);
    await expect.poll(domainStatus).toBe("Verified");
    const live = await harness.sdk("live");
    const before = await live.domains.get(domainId());
    const current = before.dkim.map((key) => key.selector);
    expect(await rotationNotice().count()).toBe(0);

    await rotateButton().click();
    const dialog = page.getByRole("dialog", { name: "Rotate DKIM keys?" });
    const explanation = (await dialog.textContent()) ?? "";
    expect(explanation).toContain(`Mail keeps being signed with the current keys (${current[0]} and ${current[1]}) until the new records are published`);
    expect(explanation).not.toContain("already waiting");
    await dialog.getByRole("button", { name: "Rotate DKIM keys" }).click();
    await dialog.waitFor({ state: "hidden" });
    await rotationNotice().waitFor();

    const rotating = await live.domains.get(domainId());
    expect(rotating.dkim).toEqual(before.dkim);
    const rotation = rotating.dkim_rotation!;
    expect(rotation.keys.map((key) => key.algorithm)).toEqual(["rsa-sha256", "ed25519-sha256"]);
    const next = rotation.keys.map((key) => key.selector);
    expect(next.filter((selector) => current.includes(selector))).toEqual([]);

    const notice = (await rotationNotice().textContent()) ?? "";
    expect(notice).toContain(`A DKIM key rotation started ${await shownAs(rotation.started_at)} is waiting for its new records.`);
    expect(notice).toContain(`The new keys (${next[0]} and ${next[1]}) sign nothing until a verification finds all their records`);
    expect(notice).toContain(`until then the current keys (${current[0]} and ${current[1]}) go on signing mail from ${DOMAIN}`);
    expect(notice).toContain("Publish the records marked New DKIM key below, then press Verify");
    expect(notice).toContain("the old DKIM records can be removed from DNS a week later");

    // The new keys' records, after the others, with Copy buttons like them; not "Recommended":
    // the rotation never ends without them.
    await expect.poll(() => recordRows().count()).toBe(7);
    const added = rowsOf("New DKIM key");
    expect(await added.getByTestId("record-name").allTextContents()).toEqual(next.map((selector) => `${selector}._domainkey.${DOMAIN}`));
    expect(await added.getByTestId("record-value").allTextContents()).toEqual([
      expect.stringMatching(/^v=DKIM1; k=rsa; p=/),
      expect.stringMatching(/^v=DKIM1; k=ed25519; p=/),
    ]);
    expect(await added.getByTestId("record-need").allTextContents()).toEqual(["For the key rotation", "For the key rotation"]);
    expect(await added.getByTestId("record-status").allTextContents()).toEqual(["Not checked yet", "Not checked yet"]);
    expect(await added.getByRole("button", { name: "Copy name" }).count()).toBe(2);
    expect(await added.getByRole("button", { name: "Copy value" }).count()).toBe(2);
    expect(await rowsOf("DKIM").getByTestId("record-need").allTextContents()).toEqual(["Required", "Required"]);
    expect(await rowOf("DMARC").getByTestId("record-need").textContent()).toBe("Recommended");
    // The summary lists the keys that sign: still the current ones.
    const selectors = (await summaryRow("DKIM selectors").locator("dd").textContent()) ?? "";
    for (const selector of current) expect(selectors).toContain(selector);
    for (const selector of next) expect(selectors).not.toContain(selector);
    await screenshot(page, "domain-dkim-rotation");
  });

  it("replaces the waiting keys when rotated again, and keeps signing with the current keys while Verify does not find the new records", async () => {
    const live = await harness.sdk("live");
    const first = (await live.domains.get(domainId())).dkim_rotation!.keys.map((key) => key.selector);
    const firstValues = await rowsOf("New DKIM key").getByTestId("record-value").allTextContents();

    await rotateButton().click();
    const dialog = page.getByRole("dialog", { name: "Rotate DKIM keys?" });
    expect(await dialog.textContent()).toContain(`is already waiting: its keys (${first[0]} and ${first[1]}) are replaced`);
    await dialog.getByRole("button", { name: "Rotate DKIM keys" }).click();
    await dialog.waitFor({ state: "hidden" });
    const rotating = await live.domains.get(domainId());
    const next = rotating.dkim_rotation!.keys.map((key) => key.selector);
    // Fresh keys (the selectors' random part could repeat; the keys cannot).
    await expect.poll(() => rowsOf("New DKIM key").getByTestId("record-value").allTextContents()).not.toEqual(firstValues);
    expect(await rowsOf("New DKIM key").getByTestId("record-name").allTextContents()).toEqual(next.map((selector) => `${selector}._domainkey.${DOMAIN}`));
    expect(await recordRows().count()).toBe(7);
    expect(await rotationNotice().textContent()).toContain(`The new keys (${next[0]} and ${next[1]})`);

    // DMARC published, so that no recommended record is left to mention: a new key's record is
    // not one, and must not be called one.
    const dmarc = records.find((record) => record.purpose === "DMARC")!;
    harness.dns.add(dmarc.name, asDns(dmarc));
    await verify();
    const result = (await page.getByTestId("verify-result").textContent()) ?? "";
    expect(result).toContain(`${DOMAIN} is verified.`);
    expect(result).toContain("The new DKIM keys take over once all their records are found; until then mail is still signed with the current keys.");
    expect(result).not.toContain("recommended");
    expect(await rowsOf("New DKIM key").getByTestId("record-status").locator(".badge").allTextContents()).toEqual(["Missing", "Missing"]);
    expect(await domainStatus()).toBe("Verified");
    expect(await rotationNotice().count()).toBe(1);
    expect((await live.domains.get(domainId())).dkim_rotation!.keys.map((key) => key.selector)).toEqual(next);
  });

  it("switches signing to the new keys when Verify finds their records, and says the old DKIM records can go in a week", async () => {
    const live = await harness.sdk("live");
    const before = await live.domains.get(domainId());
    const next = before.dkim_rotation!.keys.map((key) => key.selector);
    const old = before.dkim.map((key) => key.selector);
    const oldNames = before.records.filter((record) => record.purpose === "dkim").map((record) => record.name);

    // Published as the page's Copy buttons give them, as for the domain's first records.
    const published: PublishedRecord[] = [];
    for (const row of await rowsOf("New DKIM key").all()) published.push(await copyRecord(row));
    expect(published.map((record) => record.name)).toEqual(next.map((selector) => `${selector}._domainkey.${DOMAIN}`));
    for (const record of published) harness.dns.add(record.name, asDns(record));
    await verify();

    const after = await live.domains.get(domainId());
    expect(after.dkim.map((key) => key.selector)).toEqual(next);
    expect(after.dkim_rotation).toBeNull();
    expect(after.records.filter((record) => record.purpose === "dkim").map((record) => record.name)).toEqual(published.map((record) => record.name));
    expect(after.records.some((record) => oldNames.includes(record.name))).toBe(false);

    const result = (await page.getByTestId("verify-result").textContent()) ?? "";
    expect(result).toContain(`${DOMAIN} is verified.`);
    expect(result).toContain(`The new DKIM keys now sign ${DOMAIN}'s mail (${next[0]} and ${next[1]}).`);
    const weekLater = await shownAsDate(Date.parse(after.last_checked_at!) + 7 * 24 * HOUR_MS);
    expect(result).toContain(`The old DKIM records (${oldNames[0]} and ${oldNames[1]}) can be removed from DNS in a week, from ${weekLater}`);
    expect(await rotationNotice().count()).toBe(0);

    // The new records are the domain's DKIM records now, required; the old ones are gone.
    expect(await rowsOf("New DKIM key").count()).toBe(0);
    expect(await recordRows().count()).toBe(5);
    const dkim = rowsOf("DKIM");
    expect(await dkim.getByTestId("record-name").allTextContents()).toEqual(published.map((record) => record.name));
    expect(await dkim.getByTestId("record-need").allTextContents()).toEqual(["Required", "Required"]);
    expect(await dkim.getByTestId("record-status").allTextContents()).toEqual(["Verified", "Verified"]);
    const selectors = (await summaryRow("DKIM selectors").locator("dd").textContent()) ?? "";
    for (const selector of next) expect(selectors).toContain(selector);
    for (const selector of old) expect(selectors).not.toContain(selector);
    await screenshot(page, "domain-dkim-rotated");

    // The later tests take the DKIM record in use out of DNS: the new RSA one.
    const others = records.filter((record) => record.purpose !== "DKIM");
    records.splice(0, records.length, ...others, ...published.map((record) => ({ ...record, purpose: "DKIM" })));
  });

  it("sets a monthly quota in Settings, next to the default sender", async () => {
    await nav("Settings").click();
    await expect.poll(() => heading().textContent()).toBe("Settings");
    const quota = page.getByLabel("Monthly quota");
    await expect.poll(() => quota.inputValue()).toBe("");
    expect(await quota.getAttribute("placeholder")).toBe("No limit");
    await quota.fill(String(QUOTA));
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    await screenshot(page, "settings-quota");
    const live = await harness.sdk("live");
    expect((await live.workspace.get()).monthly_quota).toBe(QUOTA);
  });

  it("counts a live message from the verified domain on the overview, against the quota; sandbox mail does not count", async () => {
    const live = await harness.sdk("live");
    // The recipient's domain has no records on this DNS server, and the worker is not running:
    // the message is accepted (and counted) but never leaves the machine.
    const message = await live.messages.create({ from: `Acme <hello@${DOMAIN}>`, to: "someone@nowhere.test", subject: "Your receipt", html: "<p>Thanks</p>" });
    expect(message.environment).toBe("live");
    const sandbox = await harness.sdk("sandbox");
    await sandbox.messages.create({ from: `Acme <hello@${DOMAIN}>`, to: "delivered@simulator.test", subject: "Not counted", html: "<p>Sandbox</p>" });

    await nav("Overview").click();
    await expect.poll(() => heading().textContent()).toBe("Overview");
    const usage = page.getByRole("region", { name: "Live usage" });
    // Numbers are formatted in the browser's locale: any thousands separator will do.
    await expect.poll(() => usage.getByTestId("usage-quota").textContent()).toMatch(/^1 of 50\D?000 live messages this month$/);
    expect(await usage.getByRole("meter", { name: "Monthly quota used" }).getAttribute("value")).toBe("1");
    expect(await usage.textContent()).toContain("Sandbox messages never count");
    expect(await usage.textContent()).toMatch(/49\D?999 left; the quota resets on .+ \(UTC\)/);
    // The chart, and the same numbers as a table: 30 days, today's bar the one message.
    await usage.getByTestId("usage-chart").locator("canvas").first().waitFor();
    await usage.getByText("Show the numbers").click();
    const days = usage.locator("tbody tr");
    expect(await days.count()).toBe(30);
    expect(((await days.last().locator("td").textContent()) ?? "").trim()).toBe("1");
    await screenshot(page, "overview-usage");
  });

  it("shows a verified domain whose DKIM record is gone as missing records after Verify: still sending, in its grace period", async () => {
    await page.goto(domainPath);
    await expect.poll(domainStatus).toBe("Verified");
    expect(await healthNotice().count()).toBe(0);

    const rsa = records.find((record) => record.purpose === "DKIM" && record.value.startsWith("v=DKIM1; k=rsa"))!;
    harness.dns.remove(rsa.name);
    await verify();

    expect(await page.getByTestId("verify-result").textContent()).toContain("No longer verified: 1 required record was not found as expected");
    expect(await page.getByTestId("verify-result").textContent()).toContain("Live mail is still sent during a grace period");
    expect(await domainStatus()).toBe("Records missing");
    expect(await rowOf("DKIM", 0).getByTestId("record-status").locator(".badge").textContent()).toBe("Missing");
    expect(await rowOf("DKIM", 1).getByTestId("record-status").locator(".badge").textContent()).toBe("Verified");
    expect(await page.locator(".summary").textContent()).toContain("3 of 4 verified");
    expect(await rotateButton().count()).toBe(0);

    // The rows show the API's instants: the failure began at this check, the next is within the hour.
    const domain = await (await harness.sdk("live")).domains.get(domainPath.split("/").pop()!);
    expect(domain).toMatchObject({ status: "temporary_failure", failing_since: domain.last_checked_at });
    expect(Date.parse(domain.grace_ends_at!) - Date.parse(domain.failing_since!)).toBe(GRACE_MS);
    expect(Date.parse(domain.next_check_at!) - Date.parse(domain.last_checked_at!)).toBeLessThanOrEqual(HOUR_MS);
    expect(await summaryRow("Failing since").locator("dd").textContent()).toBe(await shownAs(domain.failing_since!));
    expect(await summaryRow("Grace period ends").locator("dd").textContent()).toBe(await shownAs(domain.grace_ends_at!));
    expect(await summaryRow("Next automatic check").locator("dd").textContent()).toBe(await shownAs(domain.next_check_at!));

    const notice = (await healthNotice().textContent()) ?? "";
    expect(await healthNotice().getAttribute("class")).toContain("notice--warning");
    expect(notice).toContain(`Required records missing since ${await shownAs(domain.failing_since!)}.`);
    expect(notice).toContain(`Live mail from ${DOMAIN} is still sent until its grace period ends, ${await shownAs(domain.grace_ends_at!)}, then refused`);
    expect(notice).toContain("The server looks them up again every hour");
    expect(notice).toContain("Republish the records marked Missing or Mismatch below, then press Verify.");
    await screenshot(page, "domain-records-missing");

    // What the notice promises: live mail from the domain is still accepted.
    const accepted = await sendLive("Still sending");
    expect(accepted).toMatchObject({ environment: "live" });

    await page.getByRole("link", { name: "← Domains" }).click();
    const row = page.getByTestId("domain-row").filter({ hasText: DOMAIN });
    await expect.poll(() => row.locator(".badge").textContent()).toBe("Records missing");
    expect(await row.textContent()).toContain("3 of 4 verified");
  });

  it("filters the Domains list by status: the domain under Records missing, none under Failed", async () => {
    const rows = () => page.getByTestId("domain-row");
    const filter = async (label: string) => {
      const form = page.getByRole("form", { name: "Filters" });
      await form.getByLabel("Status").selectOption({ label });
      await form.getByRole("button", { name: "Apply filters" }).click();
    };

    await filter("Records missing");
    await page.waitForURL((url) => url.search === "?status=temporary_failure");
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().textContent()).toContain(DOMAIN);

    await filter("Failed");
    await page.waitForURL((url) => url.search === "?status=failed");
    await page.getByText("No domains match this filter.").waitFor();
    expect(await rows().count()).toBe(0);

    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.waitForURL((url) => url.search === "");
    await expect.poll(() => rows().count()).toBe(1);
  });

  it("warns on the overview, in either environment, that the domain's records are missing until when, with a link to its page", async () => {
    const domain = await (await harness.sdk("live")).domains.get(domainId());
    const expected = `${DOMAIN} is missing DNS records since ${await shownAs(domain.failing_since!)}: live mail from it stops at ${await shownAs(domain.grace_ends_at!)} unless they are published again.`;
    await openOverview();
    expect(await domainNotices().count()).toBe(1);
    expect(await domainNotices().getAttribute("class")).toContain("notice--warning");
    expect(await domainNotices().textContent()).toBe(expected);
    expect(await domainNotices().getByRole("link", { name: DOMAIN, exact: true }).getAttribute("href")).toBe(domainPath);
    await screenshot(page, "overview-domain-records-missing");

    // Domains belong to the workspace: the live side warns the same.
    expect(await envSwitch().getAttribute("aria-checked")).toBe("false");
    await envSwitch().click();
    await expect.poll(() => envSwitch().getAttribute("aria-checked")).toBe("true");
    await expect.poll(() => domainNotices().textContent()).toBe(expected);
    await envSwitch().click();
    await expect.poll(() => envSwitch().getAttribute("aria-checked")).toBe("false");

    await domainNotices().getByRole("link", { name: DOMAIN, exact: true }).click();
    await page.waitForURL((url) => url.pathname === domainPath);
    await expect.poll(domainStatus).toBe("Records missing");
    expect(await healthNotice().count()).toBe(1);
  });

  it("keeps the rest of the overview, without a domain line or an error, when the domains cannot be listed", async () => {
    // Every member may list domains (x-mailroom-role: viewer); the refusal is staged in the
    // browser, as a role lowered below that, or any server trouble, would answer.
    const refuse = (url: URL) => url.pathname === "/v1/domains";
    await page.route(refuse, (route) =>
      route.fulfill({
        status: 403,
        contentType: "application/problem+json",
        body: JSON.stringify({ type: "about:blank", title: "Forbidden", status: 403, code: "insufficient_role", detail: "Staged by the test." }),
      }),
    );
    const before = harness.opened.errors.length;
    try {
      await openOverview();
      expect(await domainNotices().count()).toBe(0);
      await page.getByRole("region", { name: "Live usage" }).getByTestId("usage-quota").waitFor();
      expect(await page.locator(".error-state").count()).toBe(0);
    } finally {
      await page.unroute(refuse);
    }
    // The browser's own line for each refused request (one per failing status), and nothing from the page.
    const refused = expect.stringMatching(/Failed to load resource: the server responded with a status of 403/);
    await expect.poll(() => harness.opened.errors.slice(before)).toEqual([refused, refused]);
  });

  it("says the records are still missing when Verify finds them gone again within the grace period", async () => {
    await page.goto(domainPath);
    await expect.poll(domainStatus).toBe("Records missing");
    harness.server.testApp.clock.advance(HOUR_MS);
    await verify();
    expect(await page.getByTestId("verify-result").textContent()).toContain("Records still missing: 1 required record was not found as expected");
    expect(await page.getByTestId("verify-result").textContent()).toContain("The grace period continues");
    expect(await page.getByTestId("verify-result").textContent()).not.toContain("Not verified yet");
    expect(await domainStatus()).toBe("Records missing");
  });

  it("fails the domain when Verify finds the record still missing after the grace period: live mail is refused", async () => {
    // Past the end of the grace period on the server's clock (the page's token expires with it and is renewed).
    harness.server.testApp.clock.advance(GRACE_MS);
    await verify();

    expect(await page.getByTestId("verify-result").textContent()).toContain("Grace period over: 1 required record was not found as expected");
    expect(await page.getByTestId("verify-result").textContent()).toContain(`Live mail from ${DOMAIN} is refused from now on`);
    expect(await domainStatus()).toBe("Failed");
    const notice = (await healthNotice().textContent()) ?? "";
    expect(await healthNotice().getAttribute("class")).toContain("notice--danger");
    expect(notice).toContain(`Live mail from ${DOMAIN} is refused.`);
    expect(notice).toContain("Republish the records marked Missing or Mismatch below, then press Verify.");
    // A failed domain waits for Verify: no automatic check, and its failure keeps its start.
    expect(await summaryRow("Next automatic check").count()).toBe(0);
    expect(await summaryRow("Failing since").count()).toBe(1);
    await screenshot(page, "domain-failed");

    const refused = await sendLive("Refused while failed");
    expect(refused).toBeInstanceOf(UnprocessableEntityError);
    expect((refused as UnprocessableEntityError).code).toBe("sender_domain_not_verified");
  });

  it("says on the overview that live mail from the failed domain is refused, with a link to its page", async () => {
    const domain = await (await harness.sdk("live")).domains.get(domainId());
    expect(domain.status).toBe("failed");
    await openOverview();
    expect(await domainNotices().count()).toBe(1);
    expect(await domainNotices().getAttribute("class")).toContain("notice--danger");
    expect(await domainNotices().textContent()).toBe(
      `Live mail from ${DOMAIN} is refused: its DNS records have been missing since ${await shownAs(domain.failing_since!)}.`,
    );
    await screenshot(page, "overview-domain-failed");
    await domainNotices().getByRole("link", { name: DOMAIN, exact: true }).click();
    await page.waitForURL((url) => url.pathname === domainPath);
    await expect.poll(domainStatus).toBe("Failed");
  });

  it("verifies the domain again once the DKIM record is republished, and live mail is accepted again", async () => {
    const rsa = records.find((record) => record.purpose === "DKIM" && record.value.startsWith("v=DKIM1; k=rsa"))!;
    harness.dns.set(rsa.name, [asDns(rsa)]);
    await verify();

    expect(await page.getByTestId("verify-result").textContent()).toContain(`${DOMAIN} is verified again.`);
    expect(await page.getByTestId("verify-result").textContent()).toContain("live mail may be sent from it again");
    expect(await domainStatus()).toBe("Verified");
    expect(await healthNotice().count()).toBe(0);
    expect(await summaryRow("Failing since").count()).toBe(0);
    expect(await summaryRow("Next automatic check").count()).toBe(1);
    expect(await sendLive("Sending again")).toMatchObject({ environment: "live" });

    await openOverview();
    expect(await domainNotices().count()).toBe(0);
  });

  it("deletes the domain after confirmation, after which live mail from it is refused", async () => {
    await page.goto(domainPath);
    await page.getByRole("button", { name: "Delete domain" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete domain?" });
    expect(await dialog.textContent()).toContain(`Live mail from ${DOMAIN} is refused from now on`);
    await dialog.getByRole("button", { name: "Delete domain" }).click();
    await page.waitForURL((url) => url.pathname === "/domains");
    await page.locator(".empty--teach").waitFor();

    const refused = await (await harness.sdk("live")).messages
      .create({ from: `Acme <hello@${DOMAIN}>`, to: "someone@nowhere.test", subject: "Refused", html: "<p>No</p>" })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UnprocessableEntityError);
    expect((refused as UnprocessableEntityError).code).toBe("sender_domain_not_verified");
  });

  it("raised no script error along the way", () => {
    // The browser logs each 4xx answer: the 422 is the refused domain name; the 401 is the page's
    // token, expired when the server's clock jumped past the grace period, and renewed; the 403 is
    // the domain listing refused on purpose (its own test checks that nothing else was logged).
    const unexpected = harness.opened.errors.filter((error) => !/Failed to load resource: the server responded with a status of (422|401|403)/.test(error));
    expect(unexpected).toEqual([]);
  });
});
