import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_DIST, registerDashboard } from "../../src/http/dashboard-routes.js";
import { databases } from "../helpers/databases.js";
import { createTestApp, type TestApp } from "../helpers/test-app.js";

/** The built dashboard (make build; make test builds it first) served at `/`. */
describe("serving the dashboard", () => {
  let t: TestApp;
  beforeAll(async () => {
    if (!existsSync(`${DASHBOARD_DIST}index.html`)) throw new Error("dashboard/dist is not built: run `make build` (make test does)");
    t = await createTestApp(databases[0]!);
  });
  afterAll(async () => t?.close());

  const html = { accept: "text/html,application/xhtml+xml" };

  it("answers a browser at / and at any client-side route with the app and a strict CSP", async () => {
    for (const url of ["/", "/messages/msg_01jd3k8m2q5v7w9x1y3z5a7b9c", "/invitations/abc", "/settings?tab=members"]) {
      const res = await t.app.inject({ method: "GET", url, headers: html });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
      expect(res.body).toContain('<div id="root">');
      expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
      expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
    }
  });

  it("serves fingerprinted assets as immutable", async () => {
    const asset = readdirSync(`${DASHBOARD_DIST}assets`).find((name) => name.endsWith(".js"))!;
    const res = await t.app.inject({ method: "GET", url: `/assets/${asset}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["cache-control"]).toContain("immutable");
  });

  it("keeps API paths and non-browser clients on problem documents", async () => {
    for (const [url, headers] of [["/v1/nothing", html], ["/auth/nothing", html], ["/", {}], ["/messages", { accept: "application/json" }]] as const) {
      const res = await t.app.inject({ method: "GET", url, headers });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers["content-type"], url).toMatch(/^application\/problem\+json/);
    }
  });
});

/** Only the build's own assets/ folder is fingerprinted, wherever Mailroom is installed. */
describe("serving the dashboard from an install path that contains /assets/", () => {
  let dir: string;
  let app: FastifyInstance;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "mailroom-dashboard-"));
    // e.g. /srv/assets/mailroom/dashboard/dist/
    const root = join(dir, "assets", "mailroom", "dist") + "/";
    mkdirSync(join(root, "assets"), { recursive: true });
    writeFileSync(join(root, "index.html"), '<!doctype html><div id="root"></div>');
    writeFileSync(join(root, "favicon.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>");
    writeFileSync(join(root, "assets", "index-Cx1a2b3c.js"), "export {};");
    app = Fastify();
    const page = registerDashboard(app, root);
    app.setNotFoundHandler((req, reply) => page(req, reply) ?? reply.code(404).send());
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves index.html and the files beside it for revalidation, and only assets/ as immutable", async () => {
    for (const url of ["/index.html", "/favicon.svg"]) {
      const res = await app.inject({ method: "GET", url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["cache-control"], url).toBe("no-cache");
    }
    const page = await app.inject({ method: "GET", url: "/", headers: { accept: "text/html" } });
    expect(page.headers["cache-control"]).toBe("no-cache");
    const asset = await app.inject({ method: "GET", url: "/assets/index-Cx1a2b3c.js" });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
  });
});
