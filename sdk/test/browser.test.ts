import { runInNewContext } from "node:vm";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

/**
 * The dashboard runs the SDK in a browser. Bundling it for the browser fails on any Node-only
 * import, and running the bundle where only Web APIs exist (no process, Buffer or require) fails
 * on any Node-only global in the request path.
 */
describe("the SDK in a browser", () => {
  async function browserBundle(): Promise<string> {
    const result = await build({
      entryPoints: ["sdk/src/index.ts"],
      bundle: true,
      platform: "browser",
      format: "iife",
      globalName: "MailroomSDK",
      write: false,
      logLevel: "silent",
    });
    return result.outputFiles[0]!.text;
  }

  /** Only what a browser page has: Web APIs, no Node globals. */
  function browserGlobals() {
    return {
      fetch,
      Request,
      Response,
      Headers,
      URL,
      URLSearchParams,
      FormData,
      Blob,
      AbortController,
      AbortSignal,
      TextEncoder,
      TextDecoder,
      crypto: globalThis.crypto,
      atob,
      btoa,
      setTimeout,
      clearTimeout,
      console,
    };
  }

  it("bundles for the browser without Node built-ins", async () => {
    const code = await browserBundle();
    expect(code).not.toMatch(/require\(["']node:/);
  });

  it("sends a message, with its Idempotency-Key, where only Web APIs exist", async () => {
    const context: Record<string, unknown> = browserGlobals();
    runInNewContext(await browserBundle(), context);
    const sent: Request[] = [];
    const stubFetch = async (request: Request) => {
      sent.push(request);
      return new Response(JSON.stringify({ id: "msg_1", status: "queued" }), { status: 202, headers: { "content-type": "application/json" } });
    };
    const script = `(async () => {
      const mr = new MailroomSDK.Mailroom({ apiKey: "svc_test_browser", baseUrl: "https://mail.example", fetch: stubFetch });
      return mr.messages.create({ to: "ada@example.com", subject: "Hi", html: "<p>Hi</p>" });
    })()`;
    const message = await runInNewContext(script, { ...context, stubFetch });
    expect(message).toEqual({ id: "msg_1", status: "queued" });
    expect(sent[0]?.url).toBe("https://mail.example/v1/messages");
    expect(sent[0]?.headers.get("idempotency-key")).toMatch(/^[0-9a-f-]{36}$/);
    expect("process" in context).toBe(false);
  });

  it("leaves User-Agent to the browser in a page", async () => {
    const context: Record<string, unknown> = { ...browserGlobals(), document: {} };
    runInNewContext(await browserBundle(), context);
    const sent: Request[] = [];
    const stubFetch = async (request: Request) => {
      sent.push(request);
      return new Response(JSON.stringify({ id: "ws_1", object: "workspace" }), { status: 200, headers: { "content-type": "application/json" } });
    };
    await runInNewContext(`new MailroomSDK.Mailroom({ apiKey: "svc_test_browser", baseUrl: "https://mail.example", fetch: stubFetch }).workspace.get()`, { ...context, stubFetch });
    expect(sent[0]?.headers.has("user-agent")).toBe(false);
  });

  it("needs the key passed in, where there is no process.env to read it from", async () => {
    const context: Record<string, unknown> = browserGlobals();
    runInNewContext(await browserBundle(), context);
    expect(() => runInNewContext("new MailroomSDK.Mailroom()", context)).toThrow(/MAILROOM_API_KEY/);
  });
});
