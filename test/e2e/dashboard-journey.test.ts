import { AuthenticationError, Mailroom } from "mailroom";
import type { Browser, Page, Request, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, screenshot, signInThroughPage, type OpenedPage } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../helpers/http-server.js";

/**
 * One user's first hour with the dashboard, in real Chromium against the real server: each `it`
 * is one step and runs on from where the previous one left the page, as a person would.
 */
const OWNER = { name: "Ada Lovelace", email: "ada@acme.example", password: "correct horse battery", workspace: "Acme Mail" };
const NEW_PASSWORD = "a much longer passphrase";
const RECEIPT = {
  from: "Acme <hello@acme.example>",
  to: "grace@example.com",
  subject: "Your receipt #1042",
  html: "<h1>Thanks, Grace</h1><p>Your order of <b>3 punch cards</b> is on its way.</p>",
  text: "Thanks, Grace. Your order of 3 punch cards is on its way.",
};

describe("the dashboard, from sign-up to settings", () => {
  let server: TestServer;
  let browser: Browser;
  let opened: OpenedPage;
  let page: Page;
  let secret = "";
  let messageId = "";

  const sdk = (apiKey: string) => new Mailroom({ apiKey, baseUrl: server.baseUrl, maxRetries: 0 });
  const nav = (name: string) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true });
  const heading = () => page.getByRole("heading", { level: 1 });

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchBrowser();
    opened = await openPage(browser, server.baseUrl);
    page = opened.page;
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("sends the first visitor of a fresh server to set it up, then to the overview of their new workspace", async () => {
    await page.goto("/");
    await page.waitForURL("**/sign-up");
    await expect.poll(() => heading().textContent()).toBe("Set up Mailroom");
    await screenshot(page, "sign-up");

    await page.getByLabel("Your name").fill(OWNER.name);
    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel("Password").fill(OWNER.password);
    await page.getByLabel("Workspace name").fill(OWNER.workspace);
    await page.getByRole("button", { name: "Create account" }).click();

    await page.waitForURL((url) => url.pathname === "/");
    await expect.poll(() => heading().textContent()).toBe("Overview");
    expect(await page.getByLabel("Workspace", { exact: true }).locator("option:checked").textContent()).toBe(OWNER.workspace);
    expect(await page.getByTestId("env-badge").textContent()).toBe("Sandbox");
    expect(await nav("Overview").getAttribute("aria-current")).toBe("page");
  });

  it("teaches how to send a first message, with this server's address in the curl, SDK and CLI snippets", async () => {
    const card = page.locator(".getting-started");
    await card.waitFor();
    expect(await card.textContent()).toContain("No messages yet in the sandbox");
    const snippet = () => card.locator("pre code").textContent();
    const expected = {
      curl: [`curl ${server.baseUrl}/v1/messages`, "Bearer $MAILROOM_API_KEY"],
      "Node SDK": [`baseUrl: "${server.baseUrl}"`, "mr.messages.create({", "process.env.MAILROOM_API_KEY"],
      CLI: [`export MAILROOM_BASE_URL=${server.baseUrl}`, "npx mailroom send"],
    };
    for (const [tab, fragments] of Object.entries(expected)) {
      await card.getByRole("tab", { name: tab, exact: true }).click();
      for (const fragment of fragments) await expect.poll(snippet, { message: `${tab} snippet` }).toContain(fragment);
    }
    await card.getByRole("tab", { name: "curl", exact: true }).click();
    await screenshot(page, "overview-empty");
  });

  it("creates a sandbox API key from the overview's Create an API key, and shows its secret once, with a warning and a working Copy button", async () => {
    // The overview's button opens the API keys page with its Create API key dialog open.
    await page.locator(".getting-started").getByRole("link", { name: "Create an API key" }).click();
    await expect.poll(() => heading().textContent()).toBe("API keys");
    expect(await nav("API keys").getAttribute("aria-current")).toBe("page");
    const create = page.getByRole("dialog", { name: "Create API key" });
    await create.waitFor({ timeout: 5_000 });
    // Opened once: the address no longer asks for it, so a reload does not open it again.
    expect(new URL(page.url()).search).toBe("");
    await create.getByLabel("Name").fill("Checkout service");
    expect(await create.getByLabel("Environment").inputValue()).toBe("sandbox");
    await create.getByRole("button", { name: "Create key" }).click();

    const dialog = page.getByRole("dialog", { name: "Save your API key" });
    await dialog.waitFor();
    expect(await dialog.getByRole("note").textContent()).toContain("This is the only time the secret is shown");
    secret = (await dialog.getByTestId("api-key-secret").textContent()) ?? "";
    expect(secret).toMatch(/^svc_test_[A-Za-z0-9_]{20,}$/);
    await dialog.getByRole("button", { name: "Copy", exact: true }).click();
    await expect.poll(() => dialog.getByRole("status").textContent()).toBe("Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await screenshot(page, "api-key-secret");

    await dialog.getByRole("button", { name: "Done" }).click();
    const row = page.getByTestId("api-key-row").filter({ hasText: "Checkout service" });
    await row.waitFor();
    expect(await row.textContent()).toContain("active");
    // Who created it, by the address of the member (the API keeps the user id).
    await expect.poll(() => row.getByTestId("api-key-created-by").textContent()).toBe(`by ${OWNER.email}`);
    // Shown once: the list has only the redacted form.
    expect(await page.getByText(secret).count()).toBe(0);
    await screenshot(page, "api-keys");
  });

  it("lists a message sent with that key through the SDK in the Messages log, and finds it with the search box", async () => {
    const receipt = await sdk(secret).messages.create(RECEIPT);
    await sdk(secret).messages.create({ ...RECEIPT, to: "linus@example.com", subject: "Welcome aboard" });
    messageId = receipt.id;
    await server.testApp.drain();

    await nav("Messages").click();
    await expect.poll(() => heading().textContent()).toBe("Messages");
    const rows = page.getByTestId("message-row");
    await expect.poll(() => rows.count()).toBe(2);
    const row = rows.filter({ hasText: RECEIPT.subject });
    expect(await row.textContent()).toContain("grace@example.com");
    expect(await row.textContent()).toContain("delivered");
    await screenshot(page, "messages");

    await page.getByLabel("Search messages").fill(RECEIPT.to);
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get("recipient") === RECEIPT.to);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.textContent()).toContain(RECEIPT.subject);

    // A message id goes straight to its page.
    await page.getByLabel("Search messages").fill(messageId);
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.waitForURL(`**/messages/${messageId}`);
    await expect.poll(() => heading().textContent()).toBe(RECEIPT.subject);
  });

  it("shows the message in the sandbox inbox, rendered", async () => {
    await nav("Sandbox inbox").click();
    await expect.poll(() => heading().textContent()).toBe("Sandbox inbox");
    await expect.poll(() => page.getByTestId("inbox-message").count()).toBe(2);
    const item = page.getByTestId("inbox-message").filter({ hasText: RECEIPT.subject });
    await item.click();
    await page.waitForURL(`**/inbox/${messageId}`);
    expect(await item.getAttribute("aria-current")).toBe("true");
    const preview = page.getByRole("region", { name: "Preview" });
    await expect.poll(() => preview.getByRole("heading", { level: 2 }).textContent()).toBe(RECEIPT.subject);
    await page.frameLocator('iframe[title="Email HTML preview"]').getByRole("heading", { name: "Thanks, Grace" }).waitFor();
    await screenshot(page, "inbox");
  });

  it("opens the message page with each recipient's status, the event timeline, and the HTML, text and raw MIME", async () => {
    await page.getByRole("link", { name: "Details and events" }).click();
    await page.waitForURL(`**/messages/${messageId}`);
    await expect.poll(() => heading().textContent()).toBe(RECEIPT.subject);

    const recipient = page.getByTestId("recipient-row");
    expect(await recipient.count()).toBe(1);
    expect(await recipient.textContent()).toMatch(/grace@example\.com.*to.*delivered/);
    const events = page.getByTestId("event-row");
    await expect.poll(() => events.count()).toBe(2);
    expect(await events.allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("queued"), expect.stringContaining("delivered")]));

    const preview = page.getByTestId("email-preview");
    const frame = preview.locator('iframe[title="Email HTML preview"]');
    expect(await frame.getAttribute("sandbox")).toBe("");
    await page.frameLocator('iframe[title="Email HTML preview"]').getByText("3 punch cards").waitFor();
    // No remote image in this email: nothing to warn about, nothing to load.
    expect(await preview.getByText("Remote images are blocked").count()).toBe(0);
    expect(await preview.getByRole("button", { name: "Load remote images" }).count()).toBe(0);
    await screenshot(page, "message");

    await preview.getByRole("tab", { name: "Text" }).click();
    await expect.poll(() => preview.locator("pre").textContent()).toContain(RECEIPT.text);
    await preview.getByRole("tab", { name: "Raw MIME" }).click();
    const mime = preview.locator("pre");
    await expect.poll(() => mime.textContent()).toContain(`Subject: ${RECEIPT.subject}`);
    expect(await mime.textContent()).toMatch(/^Message-ID: <.+>$/im);
    expect(await mime.textContent()).toContain("Content-Type: multipart/alternative");
  });

  it("rotates the key with no overlap: the SDK is then refused with the old secret and accepted with the new one", async () => {
    await nav("API keys").click();
    await page.getByRole("button", { name: "Rotate Checkout service" }).click();
    const rotate = page.getByRole("dialog", { name: "Rotate API key" });
    await rotate.getByRole("radio", { name: "None: the old secret stops now" }).check();
    await rotate.getByRole("button", { name: "Rotate key" }).click();
    const dialog = page.getByRole("dialog", { name: "Save your API key" });
    const rotated = (await dialog.getByTestId("api-key-secret").textContent()) ?? "";
    expect(rotated).toMatch(/^svc_test_/);
    expect(rotated).not.toBe(secret);
    await dialog.getByRole("button", { name: "Done" }).click();

    const refused = await sdk(secret).messages.list().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect((refused as AuthenticationError).status).toBe(401);
    expect((await sdk(rotated).messages.list()).data.map((message) => message.id)).toContain(messageId);
    secret = rotated;
  });

  it("revokes the key, after which the API refuses it", async () => {
    await page.getByRole("button", { name: "Revoke Checkout service" }).click();
    await page.getByRole("dialog", { name: "Revoke API key?" }).getByRole("button", { name: "Revoke key" }).click();
    const row = page.getByTestId("api-key-row").filter({ hasText: "Checkout service" });
    await expect.poll(() => row.textContent()).toContain("revoked");
    expect(await page.getByRole("button", { name: "Revoke Checkout service" }).count()).toBe(0);

    const refused = await sdk(secret).messages.list().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect((refused as AuthenticationError).status).toBe(401);
  });

  it("switches to live with an orange banner on every page, and the live log does not show sandbox messages", async () => {
    await nav("Messages").click();
    expect(await page.getByTestId("live-banner").count()).toBe(0);
    const toggle = page.getByRole("switch", { name: "Live mode" });
    expect(await toggle.getAttribute("aria-checked")).toBe("false");
    await toggle.click();
    expect(await toggle.getAttribute("aria-checked")).toBe("true");

    const banner = page.getByTestId("live-banner");
    await banner.waitFor();
    expect(await banner.textContent()).toBe("Live You are viewing live data — real email is sent");
    expect(await page.getByTestId("env-badge").textContent()).toBe("Live");
    // Unmistakable: across the whole top of the page (under the frame's 4px orange rule), in orange.
    const box = await banner.boundingBox();
    expect(box).toMatchObject({ x: 0, width: 1280 });
    expect(box?.y).toBeLessThanOrEqual(4);
    const [red, green, blue] = (await banner.evaluate((element) => getComputedStyle(element).backgroundColor)).match(/\d+/g)!.map(Number);
    expect(red! > 200 && green! < 140 && blue! < 80, `banner colour rgb(${red}, ${green}, ${blue})`).toBe(true);

    await page.locator(".getting-started").waitFor();
    expect(await page.locator(".getting-started").textContent()).toContain("No messages yet in live");
    expect(await page.getByTestId("message-row").count()).toBe(0);
    expect(await page.getByText(RECEIPT.subject).count()).toBe(0);
    await screenshot(page, "live-messages");

    await nav("Settings").click();
    await banner.waitFor();
    await toggle.click();
    await expect.poll(() => banner.count()).toBe(0);
    expect(await page.getByTestId("env-badge").textContent()).toBe("Sandbox");
  });

  it("renames the workspace, and the top bar's switcher follows", async () => {
    await nav("Settings").click();
    await expect.poll(() => heading().textContent()).toBe("Settings");
    const name = page.getByLabel("Workspace name");
    await expect.poll(() => name.inputValue()).toBe(OWNER.workspace);
    await name.fill("Acme Transactional");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const switcher = page.getByLabel("Workspace", { exact: true });
    await expect.poll(() => switcher.locator("option:checked").textContent()).toBe("Acme Transactional");
  });

  it("changes the user's own name, and the top bar and the members list follow", async () => {
    const name = page.getByLabel("Your name");
    await expect.poll(() => name.inputValue()).toBe(OWNER.name);
    const ownRow = page.getByTestId("member-row").filter({ hasText: OWNER.email });
    await expect.poll(() => ownRow.textContent()).toContain(OWNER.name);
    await name.fill("  Ada King ");
    await page.getByRole("button", { name: "Save name" }).click();
    // This card's status: the workspace card above still says its own "Saved.".
    await page.getByRole("region", { name: "Your account" }).getByRole("status").filter({ hasText: "Saved." }).waitFor();
    await expect.poll(() => page.locator(".user-menu__name").textContent()).toBe("Ada King");
    // The members list on the same page names her as the server now does, without a reload.
    await expect.poll(() => ownRow.locator("td").first().textContent()).toBe("Ada King (you)");
    // What code reads is what the page wrote.
    const session = await (await page.request.get("/auth/session")).json();
    expect(session.user).toMatchObject({ email: OWNER.email, name: "Ada King" });
  });

  it("keeps the page, and what was typed on it, when the session cannot be reloaded after a save, and says so with a Retry", async () => {
    // An edit not saved yet, in another card: a failed reload of the session must not lose it.
    const workspaceName = page.getByLabel("Workspace name");
    await workspaceName.fill("Acme Half Typed");
    const errorsBefore = opened.errors.length;
    // The server is unreachable for the one reload that the save asks for.
    let unreachable = true;
    await page.route("**/auth/session", (route) => {
      if (!unreachable) return route.continue();
      unreachable = false;
      return route.abort("connectionrefused");
    });
    try {
      await page.getByLabel("Your name").fill("Ada Byron");
      await page.getByRole("button", { name: "Save name" }).click();
      const notice = page.getByRole("alert").filter({ hasText: "Could not refresh your session" });
      await notice.waitFor();
      expect(await notice.textContent()).toContain("Could not reach Mailroom");
      // The name was saved: only the reload after it failed.
      expect(await page.getByRole("region", { name: "Your account" }).getByRole("status").textContent()).toBe("Saved.");
      expect(await heading().textContent()).toBe("Settings");
      expect(await workspaceName.inputValue()).toBe("Acme Half Typed");
      // The top bar keeps the session it had until one is loaded.
      expect(await page.locator(".user-menu__name").textContent()).toBe("Ada King");
      expect(await page.getByText("Could not load your session").count()).toBe(0);

      await notice.getByRole("button", { name: "Retry" }).click();
      await expect.poll(() => page.locator(".user-menu__name").textContent()).toBe("Ada Byron");
      expect(await notice.count()).toBe(0);
      expect(await workspaceName.inputValue()).toBe("Acme Half Typed");
    } finally {
      await page.unroute("**/auth/session");
    }
    // The one failure the browser logs is the reload refused on purpose.
    expect(opened.errors.splice(errorsBefore)).toEqual([expect.stringMatching(/Failed to load resource: net::ERR_CONNECTION_REFUSED/)]);
    await workspaceName.fill("Acme Transactional");
  });

  it("invites a member and shows the invitation link once", async () => {
    await page.getByLabel("Email address").fill("grace@acme.example");
    await page.getByLabel("Role", { exact: true }).selectOption("developer");
    await page.getByRole("button", { name: "Invite", exact: true }).click();
    const url = (await page.getByTestId("invitation-url").textContent()) ?? "";
    expect(url).toMatch(new RegExp(`^${server.baseUrl}/invitations/.+`));
    const row = page.getByTestId("invitation-row");
    await expect.poll(() => row.textContent()).toContain("grace@acme.example");
    expect(await row.textContent()).toContain("developer");
    // The link leads to an invitation to this workspace, under its new name.
    const preview = await page.request.get(`/auth/invitations/${url.split("/invitations/")[1]}`);
    expect(preview.status()).toBe(200);
    expect(await preview.json()).toMatchObject({ email: "grace@acme.example", role: "developer", workspace_name: "Acme Transactional" });
    await screenshot(page, "settings");
  });

  it("changes the password: the new one signs in and the old one no longer does", async () => {
    // A mistyped current password is said in words, as at sign-in: no code, no request id.
    await page.getByLabel("Current password").fill(`${OWNER.password}-typo`);
    await page.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel("Confirm new password").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Change password" }).click();
    const refused = page.getByRole("alert");
    await refused.waitFor();
    expect(await refused.textContent()).toBe("Could not change the passwordWrong passwordThe current password is not correct.");

    await page.getByLabel("Current password").fill(OWNER.password);
    await page.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel("Confirm new password").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByRole("status").filter({ hasText: "Password changed." }).waitFor();
    // This session stays signed in, and its next call exchanges a fresh token.
    await nav("Overview").click();
    await page.getByRole("heading", { name: "Messages, last 7 days" }).waitFor();
    await screenshot(page, "overview");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL("**/sign-in");
    await expect.poll(() => heading().textContent()).toBe("Sign in to Mailroom");
    await screenshot(page, "sign-in");

    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel("Password").fill(OWNER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    // Said in words to the person signing in: no machine code, no request id (a 5xx keeps them).
    expect(await alert.textContent()).toBe("Could not sign inInvalid email or passwordThe email address or the password is not correct.");

    await signInThroughPage(page, OWNER.email, NEW_PASSWORD);
    expect(new URL(page.url()).pathname).toBe("/");
  });

  it("moves to a new workspace once the session lists it, never by way of another workspace", async () => {
    // Which workspace each token the page is given is for, from the exchanges' answers: a reload
    // drops the tokens held in memory, so every one the page uses from here is seen.
    const tokenWorkspace = new Map<string, string>();
    const onResponse = async (response: Response) => {
      if (new URL(response.url()).pathname !== "/auth/token" || !response.ok()) return;
      const grant = (await response.json()) as { token: string; workspace_id: string };
      tokenWorkspace.set(grant.token, grant.workspace_id);
    };
    const used: string[] = [];
    const onRequest = (request: Request) => {
      if (new URL(request.url()).pathname.startsWith("/v1/")) used.push(request.headers()["authorization"]?.replace(/^Bearer /, "") ?? "");
    };
    page.on("response", onResponse);
    page.on("request", onRequest);
    const switcher = page.getByLabel("Workspace", { exact: true });
    const chosen = () => switcher.locator("option:checked").textContent();
    const dialog = page.getByRole("dialog", { name: "Create workspace" });
    const create = async (name: string) => {
      // A later join than the last: the session lists the workspaces in the order they were joined.
      server.testApp.clock.advance(1000);
      await page.getByRole("button", { name: "New workspace" }).click();
      await dialog.getByLabel("Workspace name").fill(name);
      await dialog.getByRole("button", { name: "Create workspace" }).click();
    };
    try {
      await page.reload();
      await expect.poll(chosen).toBe("Acme Transactional");
      await create("Acme Staging");
      await expect.poll(chosen).toBe("Acme Staging");
      await page.getByRole("heading", { name: "Send your first message" }).waitFor();

      // From the second workspace, a third, with the session's answer held back: until it lists
      // the new workspace, the page stays where it is (the first workspace is not a stand-in).
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let asked = () => {};
      const sessionAsked = new Promise<void>((resolve) => (asked = resolve));
      let continued = Promise.resolve();
      await page.route("**/auth/session", (route) => {
        asked();
        continued = held.then(() => route.continue());
        return continued;
      });
      const staging = used.length;
      const stagingId = tokenWorkspace.get(used[staging - 1] ?? "");
      try {
        await create("Acme Archive");
        await sessionAsked;
        // Two frames: time for whatever the page does with the creation's answer to be drawn.
        await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
        expect(await chosen()).toBe("Acme Staging");
        expect(used.slice(staging).map((token) => tokenWorkspace.get(token))).toEqual(used.slice(staging).map(() => stagingId));
      } finally {
        release();
        await continued;
        await page.unroute("**/auth/session");
      }
      await expect.poll(chosen).toBe("Acme Archive");
      await page.getByRole("heading", { name: "Send your first message" }).waitFor();
      // Every call since Create went to the workspace shown before it, or to the new one.
      const archiveId = (await (await page.request.get("/auth/session")).json()).workspaces.find((workspace: { name: string }) => workspace.name === "Acme Archive")?.id;
      const workspacesCalled = new Set(used.slice(staging).map((token) => tokenWorkspace.get(token)));
      expect([...workspacesCalled].sort()).toEqual([archiveId, stagingId].sort());
    } finally {
      page.off("response", onResponse);
      page.off("request", onRequest);
    }
  });

  it("shows the overview's figures, at zero, for an environment whose messages are all older than a week", async () => {
    // A message accepted eight days ago by the server's clock, with a token exchanged now (the
    // session lives 7 days from its last exchange, by the same clock).
    const { csrf_token, workspaces } = await (await page.request.get("/auth/session")).json();
    const archive = workspaces.find((workspace: { name: string }) => workspace.name === "Acme Archive");
    const exchange = await page.request.post("/auth/token", {
      headers: { "x-csrf-token": csrf_token },
      data: { workspace_id: archive.id, environment: "sandbox" },
    });
    const { token } = await exchange.json();
    const now = server.testApp.clock.now();
    server.testApp.clock.set(now - 8 * 86_400_000);
    try {
      await sdk(token).messages.create({ ...RECEIPT, subject: "Last week's receipt" });
    } finally {
      server.testApp.clock.set(now);
    }

    await page.reload();
    await page.getByRole("heading", { name: "Messages, last 7 days" }).waitFor();
    expect(await page.locator(".getting-started").count()).toBe(0);
    const messages = page.locator(".stat").filter({ has: page.locator("dt", { hasText: /^Messages$/ }) });
    expect(await messages.locator(".stat__value").textContent()).toBe("0");
  });

  it("raised no script error along the way", () => {
    // The expected failures: the browser logs the 403 of the mistyped current password and the
    // 401 of the sign-in with the old password.
    const unexpected = opened.errors.filter((error) => !/Failed to load resource: the server responded with a status of (401|403)/.test(error));
    expect(unexpected).toEqual([]);
  });
});
