import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPage, screenshot, type OpenedPage } from "../helpers/browser.js";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import { DashboardSession } from "../helpers/dashboard-session.js";

/**
 * What the signed-out pages say when the server refuses (docs/dashboard.md), in real Chromium
 * against the real server: a person signing in, signing up or accepting an invitation reads the
 * refusal in words (and how long to wait after too many attempts), without the machine code and
 * request id that the rest of the dashboard shows; those stay for a failure of the server, which
 * support needs to look into. Open sign-up, so that the sign-up page has its form.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const STRANGER = "nobody@acme.example";

describe("refusals on the sign-in, sign-up and invitation pages", () => {
  let harness: DashboardHarness;
  let visitor: OpenedPage;
  let page: Page;

  const alert = () => page.getByRole("alert");
  /** The refusal as shown: in words, with no code and no request id. */
  async function expectWordsOnly(words: string | RegExp, code: string): Promise<void> {
    await expect.poll(() => alert().textContent()).toMatch(words);
    const said = (await alert().textContent()) ?? "";
    expect(said).not.toContain(code);
    expect(said).not.toContain("Request ID");
    expect(said).not.toMatch(/req_/);
    expect(said).not.toContain("Code");
  }

  async function signIn(email: string, password: string): Promise<void> {
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER, env: { SIGNUP: "open" } });
    visitor = await openPage(harness.browser, harness.server.baseUrl);
    page = visitor.page;
  });

  afterAll(async () => {
    await visitor?.context.close();
    await harness?.close();
  });

  it("says a wrong password in words, without its code or request id", async () => {
    await page.goto("/sign-in");
    await signIn(OWNER.email, "not the password at all");
    await expectWordsOnly("The email address or the password is not correct.", "invalid_credentials");
    expect(await alert().textContent()).toContain("Could not sign in");
    await screenshot(page, "sign-in-wrong-password");
  });

  it("says how long to wait after too many attempts, without its code or request id", async () => {
    // An address has 5 attempts a window: spent here outside the page, the page's is the sixth.
    const elsewhere = new DashboardSession(harness.server.testApp);
    for (let attempt = 1; attempt <= 5; attempt += 1) expect((await elsewhere.signIn(STRANGER, "a wrong guess")).statusCode).toBe(401);
    await page.goto("/sign-in");
    await signIn(STRANGER, "yet another guess");
    await expectWordsOnly(/try again in \d+ min/, "too_many_attempts");
    expect(await alert().textContent()).toContain("Too many attempts");
    await screenshot(page, "sign-in-too-many-attempts");
  });

  it("says how long to wait from Retry-After when a 429 (a proxy's, say) does not", async () => {
    await page.goto("/sign-in");
    await page.route("**/auth/sign-in", (route) =>
      route.fulfill({ status: 429, contentType: "application/problem+json", headers: { "retry-after": "120" }, body: JSON.stringify({ title: "Too many requests", status: 429 }) }),
    );
    try {
      await signIn(OWNER.email, OWNER.password);
      await expectWordsOnly("Try again in 2 minutes.", "http_429");
      expect(await alert().textContent()).toContain("Too many requests");
    } finally {
      await page.unroute("**/auth/sign-in");
    }
  });

  it("keeps the request id when the server fails, and says when it cannot be reached", async () => {
    await page.goto("/sign-in");
    await page.route("**/auth/sign-in", (route) =>
      route.fulfill({
        status: 500,
        contentType: "application/problem+json",
        headers: { "request-id": "req_server_failed_for_the_test" },
        body: JSON.stringify({ type: "about:blank", title: "Internal server error", status: 500, code: "internal_error", request_id: "req_server_failed_for_the_test" }),
      }),
    );
    try {
      await signIn(OWNER.email, OWNER.password);
      await expect.poll(() => alert().textContent()).toContain("req_server_failed_for_the_test");
      expect(await alert().textContent()).toContain("Request ID");
    } finally {
      await page.unroute("**/auth/sign-in");
    }
    await page.route("**/auth/sign-in", (route) => route.abort("connectionrefused"));
    try {
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect.poll(() => alert().textContent()).toContain("Could not reach Mailroom");
    } finally {
      await page.unroute("**/auth/sign-in");
    }
  });

  it("shows a password the server refuses under the Password field, once", async () => {
    await page.goto("/sign-up");
    await page.getByLabel("Email").fill("lin@acme.example");
    // Ten UTF-16 units pass the browser's minlength; five characters do not pass the server's.
    const password = page.getByLabel("Password");
    await password.fill("😀😀😀😀😀");
    await page.getByRole("button", { name: "Create account" }).click();
    await expect.poll(() => password.getAttribute("aria-invalid")).toBe("true");
    const problem = page.locator(".field").filter({ has: password }).locator(".field__errors");
    expect(await problem.textContent()).toBe("must be 10 to 200 characters long");
    await expectWordsOnly("Could not create your account", "validation_failed");
    expect(await alert().textContent()).not.toContain("characters long");
    expect(await alert().textContent()).not.toContain("/password");
    await password.fill("😀😀😀😀😀 and more");
    await expect.poll(() => problem.count()).toBe(0);
  });

  it("says an address already registered in words on the sign-up page", async () => {
    await page.goto("/sign-up");
    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel("Password").fill("a long enough password");
    await page.getByRole("button", { name: "Create account" }).click();
    await expectWordsOnly(`An account for ${OWNER.email} exists: sign in instead.`, "email_taken");
  });

  it("says an invitation for another address in words when a signed-in member accepts it", async () => {
    const invitation = await (await harness.sdk("sandbox")).accounts.createInvitation({ email: "grace@acme.example", role: "developer" });
    // The owner's page, signed in as ada@: the invitation is grace@'s.
    page = harness.page;
    try {
      await page.goto(`/invitations/${invitation.accept_url.split("/invitations/")[1]}`);
      await page.getByRole("button", { name: "Accept invitation" }).click();
      await expectWordsOnly("This invitation is for grace@acme.example; sign in with that address to accept it.", "invitation_email_mismatch");
      expect(await alert().textContent()).toContain("Could not accept the invitation");
    } finally {
      page = visitor.page;
    }
  });
});
