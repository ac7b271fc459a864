import type { IncomingMessage } from "node:http";
import { Mailroom } from "mailroom";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DashboardSession, signedUp } from "../helpers/dashboard-session.js";
import { launchBrowser, openPage, signInThroughPage, startRecorder, type OpenedPage, type Recorder } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../helpers/http-server.js";

/**
 * Cross-site request forgery against the dashboard's /auth routes, from a real attacker page in
 * the same browser as a signed-in user. The attacker's site is http://localhost:<port>, another
 * site than the dashboard's http://127.0.0.1:<port>. The header-level cases are pinned in
 * test/integration/dashboard-auth.test.ts; this checks what a browser actually sends and does.
 */
const VICTIM = { email: "ada@acme.example", password: "correct horse battery" };
const MALLORY = { email: "mallory@evil.example", password: "mallory's own password" };
const FORGED = { email: "forged@evil.example", password: "forged account password" };
const ATTACKER_PASSWORD = "chosen by the attacker";
/** Every state-changing route of docs/dashboard.md, sorted. */
const ROUTES = ["/auth/invitations/accept", "/auth/password", "/auth/sign-in", "/auth/sign-out", "/auth/sign-up", "/auth/token"] as const;

interface Seen {
  method: string;
  path: string;
  status: number;
  origin: string | undefined;
  fetchSite: string | undefined;
  contentType: string | undefined;
  withSessionCookie: boolean;
  allowOrigin: unknown;
}

/**
 * The attacker's page: every state-changing /auth route, as an auto-submitted form (its body
 * smuggled as JSON through enctype="text/plain", the classic trick), as a credentialed JSON
 * fetch, and as a no-cors fetch (a "simple" request, sent without a preflight).
 */
function attackerPage(target: string, bodies: Record<string, object>): string {
  const forms = Object.entries(bodies)
    .map(([path, body], index) => {
      const json = JSON.stringify({ ...body, padding: "" }).slice(0, -2);
      const name = json.replace(/'/g, "&#39;");
      return `<iframe name="sink-${index}"></iframe>
<form method="POST" action="${target}${path}" enctype="text/plain" target="sink-${index}"><input type="hidden" name='${name}' value='"}'></form>`;
    })
    .join("\n");
  return `<!DOCTYPE html>
<html><head><title>You won a prize</title></head>
<body>
${forms}
<script>
  const target = ${JSON.stringify(target)};
  const bodies = ${JSON.stringify(bodies)};
  for (const form of document.forms) form.submit();
  const attempt = (path, init) => fetch(target + path, { method: "POST", credentials: "include", ...init }).then((response) => response.type + " " + response.status, (error) => error.name + ": " + error.message);
  Promise.all(Object.entries(bodies).flatMap(([path, body]) => [
    attempt(path, { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((result) => ["json " + path, result]),
    attempt(path, { mode: "no-cors", body: JSON.stringify(body) }).then((result) => ["no-cors " + path, result]),
  ])).then((results) => { window.results = Object.fromEntries(results); document.title = "done"; });
</script>
</body></html>`;
}

describe("cross-site requests to the dashboard's /auth routes, in a real browser", () => {
  let server: TestServer;
  let attacker: Recorder;
  let browser: Browser;
  let opened: OpenedPage;
  let page: Page;
  let victimWorkspaceId = "";
  const seen: Seen[] = [];
  let inPage: Record<string, string> = {};
  type Answer = { path: string; status: number; kind: string; body: string };
  const answers: Array<Promise<Answer>> = [];
  let settled: Answer[] = [];
  let documentAnswers = 0;

  const userCount = async () => Number(((await server.testApp.runtime.db.knex("users").count({ n: "*" }).first()) as { n: number }).n);
  const fromAttacker = () => seen.filter((request) => request.origin === attacker.origin || request.fetchSite === "cross-site");

  beforeAll(async () => {
    // Open sign-up, so that a forged sign-up would succeed if it got through.
    server = await startTestServer({ SIGNUP: "open" });
    // Every request the server receives, and its answer, as seen on the wire.
    server.testApp.app.server.on("request", (req: IncomingMessage, res) => {
      res.on("finish", () => {
        seen.push({
          method: req.method ?? "",
          path: req.url ?? "",
          status: res.statusCode,
          origin: req.headers.origin,
          fetchSite: req.headers["sec-fetch-site"] as string | undefined,
          contentType: req.headers["content-type"],
          withSessionCookie: /mailroom_session=/.test(req.headers.cookie ?? ""),
          allowOrigin: res.getHeader("access-control-allow-origin"),
        });
      });
    });

    const victim = await signedUp(server.testApp, { ...VICTIM, workspace_name: "Acme" });
    victimWorkspaceId = victim.workspaceId;
    const mallory = await signedUp(server.testApp, { ...MALLORY, workspace_name: "Evil Corp" });
    const asMallory = new Mailroom({ apiKey: await mallory.session.token(mallory.workspaceId), baseUrl: server.baseUrl, maxRetries: 0 });
    const invitation = await asMallory.accounts.createInvitation({ email: VICTIM.email, role: "admin" });

    const bodies: Record<(typeof ROUTES)[number], object> = {
      "/auth/sign-out": {},
      "/auth/sign-in": { email: MALLORY.email, password: MALLORY.password },
      "/auth/sign-up": { ...FORGED },
      "/auth/password": { current_password: VICTIM.password, new_password: ATTACKER_PASSWORD },
      "/auth/token": { workspace_id: victimWorkspaceId, environment: "live" },
      "/auth/invitations/accept": { token: invitation.accept_url.split("/invitations/")[1] },
    };
    attacker = await startRecorder("localhost", (_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(attackerPage(server.baseUrl, bodies));
    });

    browser = await launchBrowser();
    opened = await openPage(browser, server.baseUrl);
    page = opened.page;
    await signInThroughPage(page, VICTIM.email, VICTIM.password);

    // The victim opens the attacker's page in another tab of the same browser.
    const evil = await opened.context.newPage();
    // What the server answered, as the browser received it (the attacker's page cannot read it).
    evil.on("response", (response) => {
      if (response.request().method() !== "POST") return;
      // Read at once: a body is gone once its frame navigates again.
      const answer = { path: new URL(response.url()).pathname, status: response.status(), kind: response.request().resourceType() };
      if (answer.kind === "document") documentAnswers++;
      answers.push(response.text().then((body) => ({ ...answer, body }), (error: Error) => ({ ...answer, body: `unavailable: ${error.message.split("\n")[0]}` })));
    });
    await evil.goto(attacker.origin);
    await evil.waitForFunction(() => document.title === "done");
    inPage = await evil.evaluate(() => (window as unknown as { results: Record<string, string> }).results);
    // The forms' answers land in iframes; wait until the server has answered all six.
    await vi.waitFor(() => expect(fromAttacker().filter((request) => request.contentType === "text/plain")).toHaveLength(6));
    // Read the browser's copies of the answers before the tab goes: a closed page has no bodies.
    await vi.waitFor(() => expect(documentAnswers).toBe(ROUTES.length));
    settled = await Promise.all(answers);
    await evil.close();
  });

  afterAll(async () => {
    await browser?.close();
    await attacker?.close();
    await server?.close();
  });

  it("refuses every forged form and no-cors POST with 403, none of them carrying the session cookie", () => {
    const posts = fromAttacker().filter((request) => request.method === "POST");
    // A form and a no-cors fetch to each route.
    expect(posts.map((request) => request.path).sort()).toEqual(ROUTES.flatMap((route) => [route, route]));
    for (const request of posts) {
      expect(request, `${request.method} ${request.path}`).toMatchObject({ status: 403, fetchSite: "cross-site", origin: attacker.origin, withSessionCookie: false });
    }
  });

  it("answers each forged form 403 csrf_failed, as the browser received it", async () => {
    // The forms' answers are documents in the attacker's iframes (the no-cors ones are opaque).
    const documents = settled.filter((answer) => answer.kind === "document");
    expect(documents.map((answer) => answer.path).sort()).toEqual(ROUTES);
    for (const answer of documents) {
      expect(answer.status, answer.path).toBe(403);
      expect(JSON.parse(answer.body), answer.path).toMatchObject({ code: "csrf_failed", title: "Cross-site request refused" });
    }
  });

  it("never sends a cross-site JSON POST: the browser's preflight gets no CORS grant, so the fetch fails", () => {
    const preflights = fromAttacker().filter((request) => request.method === "OPTIONS");
    expect(preflights.map((request) => request.path).sort()).toEqual(ROUTES);
    for (const preflight of preflights) expect(preflight.allowOrigin, preflight.path).toBeUndefined();
    expect(fromAttacker().filter((request) => request.contentType?.startsWith("application/json"))).toEqual([]);
    expect(Object.keys(inPage)).toHaveLength(2 * ROUTES.length);
    for (const [attempt, result] of Object.entries(inPage)) {
      // A no-cors response is opaque: the page learns nothing from it, not even its status.
      expect(result, attempt).toBe(attempt.startsWith("json") ? "TypeError: Failed to fetch" : "opaque 0");
    }
  });

  it("leaves the user signed in as themselves, in their own workspaces only", async () => {
    const session = await page.evaluate(() => fetch("/auth/session").then((response) => response.json()));
    expect(session).toMatchObject({ signed_in: true, user: { email: VICTIM.email } });
    expect(session.workspaces.map((workspace: { id: string }) => workspace.id)).toEqual([victimWorkspaceId]);
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
  });

  it("leaves the password unchanged and creates no account", async () => {
    expect((await new DashboardSession(server.testApp).signIn(VICTIM.email, VICTIM.password)).statusCode).toBe(200);
    expect((await new DashboardSession(server.testApp).signIn(VICTIM.email, ATTACKER_PASSWORD)).statusCode).toBe(401);
    // The victim and Mallory, and nobody else.
    expect(await userCount()).toBe(2);
  });
});
