import { Mailroom } from "mailroom";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedUp } from "../helpers/dashboard-session.js";
import { launchBrowser, openPage, screenshot, signInThroughPage, startRecorder, type OpenedPage, type Recorder } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../helpers/http-server.js";

/**
 * Looking at a hostile email must run none of it and tell its sender nothing (dashboard/README.md,
 * "The email preview"). The sender's server is a recorder on loopback; the email tries every way
 * to run code or call it: scripts, an event handler, a meta refresh and a remote image.
 */
const USER = { email: "ada@acme.example", password: "correct horse battery" };
const PIXEL = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

function hostileHtml(sender: string): string {
  return `<!DOCTYPE html>
<html>
<head>
  <meta http-equiv="refresh" content="0;url=${sender}/refresh">
  <script>window.__pwned = "head script"; document.documentElement.dataset.pwned = "head script"; fetch("${sender}/script");</script>
</head>
<body>
  <h1>Your invoice is ready</h1>
  <img src=x onerror="window.__pwned = 'onerror'; document.documentElement.dataset.pwned = 'onerror'; fetch('${sender}/onerror'); alert('onerror')">
  <img src="${sender}/pixel.png" alt="tracking pixel" width="1" height="1">
  <script>alert("xss"); new Image().src = "${sender}/script-image";</script>
</body>
</html>`;
}

describe("a hostile email in the dashboard's preview", () => {
  let server: TestServer;
  let sender: Recorder;
  let browser: Browser;
  let opened: OpenedPage;
  let page: Page;
  let messageId = "";
  const dialogs: string[] = [];

  const previewFrame = () => page.frameLocator('iframe[title="Email HTML preview"]');
  /** 0 until the tracking pixel has loaded. */
  const pixelWidth = () => previewFrame().getByAltText("tracking pixel").evaluate((image) => (image as HTMLImageElement).naturalWidth);
  /** What any script of the email would have left behind, by frame (the page and the preview). */
  const traces = async () => {
    const found: Record<string, string | null> = {};
    for (const frame of page.frames()) {
      found[frame.url()] = await frame.evaluate(() => (window as { __pwned?: string }).__pwned ?? document.documentElement.dataset.pwned ?? null);
    }
    return found;
  };
  const clean = () => ({ [page.url()]: null, "about:srcdoc": null });

  beforeAll(async () => {
    server = await startTestServer();
    sender = await startRecorder("127.0.0.1", (req, res) => {
      if (req.url === "/pixel.png") res.writeHead(200, { "content-type": "image/png" }).end(PIXEL);
      else res.writeHead(200, { "content-type": "text/plain" }).end("recorded");
    });
    const { session, workspaceId } = await signedUp(server.testApp, { email: USER.email, password: USER.password });
    const mr = new Mailroom({ apiKey: await session.token(workspaceId, "sandbox"), baseUrl: server.baseUrl, maxRetries: 0 });
    messageId = (await mr.messages.create({ from: "Billing <billing@acme.example>", to: "grace@example.com", subject: "Your invoice", html: hostileHtml(sender.origin) })).id;
    await server.testApp.drain();

    browser = await launchBrowser();
    opened = await openPage(browser, server.baseUrl);
    page = opened.page;
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await signInThroughPage(page, USER.email, USER.password);
  });

  afterAll(async () => {
    await browser?.close();
    await sender?.close();
    await server?.close();
  });

  it("shows the email in a frame with an empty sandbox", async () => {
    await page.goto(`/messages/${messageId}`);
    await previewFrame().getByRole("heading", { name: "Your invoice is ready" }).waitFor();
    expect(await page.locator('iframe[title="Email HTML preview"]').getAttribute("sandbox")).toBe("");
  });

  it("runs none of its scripts or event handlers, follows no refresh, and makes no request", async () => {
    // Long enough for a refresh, a script's fetch or an image load to have happened.
    await page.waitForTimeout(3000);
    await screenshot(page, "hostile-message");

    expect(dialogs).toEqual([]);
    expect(await traces()).toEqual(clean());
    expect(sender.requests).toEqual([]);
    expect(page.url()).toBe(`${server.baseUrl}/messages/${messageId}`);
    // The frame still shows the email, not whatever a refresh would have loaded.
    await previewFrame().getByRole("heading", { name: "Your invoice is ready" }).waitFor();
    // What reached the frame: no script, no meta refresh, no handler; the remote image is there but blocked.
    expect(await previewFrame().locator("script").count()).toBe(0);
    expect(await previewFrame().locator('meta[http-equiv="refresh" i]').count()).toBe(0);
    expect(await previewFrame().locator("[onerror]").count()).toBe(0);
    expect(await pixelWidth()).toBe(0);
  });

  it("loads the remote image, and only it, once the user clicks Load remote images", async () => {
    await page.getByRole("button", { name: "Load remote images" }).click();
    await expect.poll(() => sender.requests, { timeout: 10_000 }).toContain("GET /pixel.png");
    await page.getByRole("button", { name: "Block remote images" }).waitFor();
    await page.waitForTimeout(1500);

    expect(sender.requests).toEqual(["GET /pixel.png"]);
    expect(await pixelWidth()).toBe(1);
    expect(await page.locator('iframe[title="Email HTML preview"]').getAttribute("sandbox")).toBe("");
    expect(dialogs).toEqual([]);
    expect(await traces()).toEqual(clean());
  });

  it("keeps the sandbox inbox's preview just as closed", async () => {
    sender.requests.length = 0;
    await page.goto(`/inbox/${messageId}`);
    await previewFrame().getByRole("heading", { name: "Your invoice is ready" }).waitFor();
    await page.waitForTimeout(1500);
    expect(sender.requests).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(await traces()).toEqual(clean());
  });
});
