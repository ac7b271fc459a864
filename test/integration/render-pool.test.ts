import { afterEach, describe, expect, it } from "vitest";
import { RenderPool } from "../../src/templates/render-pool.js";

/**
 * The pool itself, below the HTTP layer that refuses bodies nested too deep: a request whose
 * variables cannot be cloned to a worker thread is answered as that render's failure, and the
 * process and the other renders go on. (Integration, not unit: it starts real worker threads.)
 */
describe("RenderPool", () => {
  let pool: RenderPool | null = null;
  afterEach(async () => pool?.close());

  it("answers a render whose variables cannot reach the worker as a render problem, and renders the next", async () => {
    pool = new RenderPool({ size: 1, timeoutMs: 10_000, workerHeapMb: 64, limits: { parseLimit: 100_000, renderLimitMs: 1000, memoryLimit: 10_000_000, maxOutputChars: 100_000 } });
    const sources = { subject: "Hi", html: "<p>{{ name }}</p>", text: null };
    const options = { deriveText: false, layout: null };
    // Structured cloning recurses: nested deep enough, it overflows the stack.
    const deep = JSON.parse(`${"[".repeat(200_000)}${"]".repeat(200_000)}`) as unknown;
    const [refused, rendered] = await Promise.all([pool.render("v1", sources, { name: deep }, options), pool.render("v1", sources, { name: "Ada" }, options)]);
    expect(refused).toMatchObject({ ok: false, phase: "render", problems: [{ field: "html", message: expect.stringMatching(/^its variables could not be handed to the renderer/) }] });
    expect(rendered).toEqual({ ok: true, rendered: { subject: "Hi", html: "<p>Ada</p>", text: null } });
  });
});
