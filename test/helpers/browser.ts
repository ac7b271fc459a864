import { existsSync, mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/**
 * Real Chromium for the e2e project (DESIGN §11): Debian's, or the one CHROMIUM_PATH names. A
 * missing browser or an unbuilt dashboard fails the tests with what to do; it never skips them.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const SCREENSHOTS = `${REPO}test-results/screenshots`;

// Without these, Chromium's own background traffic (updates, sync, field trials, QUIC probes)
// reaches for the internet, which CI machines and containers often lack, and floods the log with
// refused connections. CI runs as root, where Chromium will not start with its sandbox.
const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium was not found at ${CHROMIUM_PATH}. The e2e tests need a real browser: install it (apt-get install chromium) or set CHROMIUM_PATH.`);
  }
  if (!existsSync(`${REPO}dashboard/dist/index.html`)) {
    throw new Error("The dashboard has not been built (dashboard/dist/index.html is missing): run `make -s build` first.");
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
}

export interface OpenedPage {
  context: BrowserContext;
  page: Page;
  /** Uncaught exceptions and console errors of every page of the context, as they happen. */
  errors: string[];
}

/**
 * A fresh context (its own cookies and storage) and page on `baseUrl`, with the clipboard granted
 * so that Copy buttons work as for a user who allowed them.
 */
export async function openPage(browser: Browser, baseUrl: string): Promise<OpenedPage> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseUrl });
  const errors: string[] = [];
  const watch = (page: Page) => {
    page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(`console: ${message.text()}`);
    });
  };
  context.on("page", watch);
  const page = await context.newPage();
  return { context, page, errors };
}

/** Saves a full-page screenshot as test-results/screenshots/<name>.png (git-ignored). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  // Not `fullPage: true`: Chromium runs a sandboxed frame (the email preview) in its own process
  // and leaves it blank in a capture beyond the viewport. A viewport as tall as the page paints it.
  const viewport = page.viewportSize() ?? { width: 1280, height: 900 };
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: viewport.width, height: Math.max(viewport.height, height) });
  try {
    await page.screenshot({ path: `${SCREENSHOTS}/${name}.png` });
  } finally {
    await page.setViewportSize(viewport);
  }
}

/** Signs in through the dashboard's sign-in page and waits for the overview. */
export async function signInThroughPage(page: Page, email: string, password: string): Promise<void> {
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}

/** Accepts an invitation through its page as a new user, creating their account, and waits for the overview. */
export async function acceptInvitationThroughPage(page: Page, acceptUrl: string, member: { name: string; password: string }): Promise<void> {
  await page.goto(`/invitations/${acceptUrl.split("/invitations/")[1]}`);
  await page.getByLabel("Your name").fill(member.name);
  await page.getByLabel("Password").fill(member.password);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}

export interface Recorder {
  /** e.g. http://localhost:41234 */
  origin: string;
  /** Every request received, in order: "GET /pixel.png". */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A small HTTP server on loopback standing for someone else's server (an email sender's image
 * host, an attacker's site): it records every request it receives and answers with `respond`.
 * `hostname` is the name pages use for it: "localhost" is another site than the dashboard's
 * 127.0.0.1.
 */
export async function startRecorder(hostname: "127.0.0.1" | "localhost", respond: (req: IncomingMessage, res: ServerResponse) => void): Promise<Recorder> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    respond(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${hostname}:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // The browser keeps connections alive; they would hold close() open.
        server.closeAllConnections();
      }),
  };
}
