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

  const limits = { parseLimit: 100_000, renderLimitMs: 1000, memoryLimit: 10_000_000, maxOutputChars: 100_000 };
  const options = { deriveText: false, layout: null };
  const innocentSources = { subject: "Hi {{ name }}", html: "<p>{{ name }}</p>", text: null };
  const culpritSources = { subject: "Hi", html: "{{ big.size }}", text: null };
  /** 1,500,000 empty objects: 4.5 MB as JSON, past a 32 MiB worker heap once the worker unpacks them. */
  const exhausting = () => ({ big: Array.from({ length: 1_500_000 }, () => ({})) });

  it("fails the render whose variables exhaust its worker, and renders the one given to the same worker with it", async () => {
    // The size bound raised past these variables: only the worker's heap stops them.
    pool = new RenderPool({ size: 1, timeoutMs: 20_000, workerHeapMb: 32, maxVariablesBytes: 16 * 1024 * 1024, limits });
    // A started worker, so that both renders below are given to it in one batch.
    expect(await pool.render("v0", innocentSources, { name: "warm" }, options)).toMatchObject({ ok: true });
    const [innocent, culprit] = await Promise.all([pool.render("v1", innocentSources, { name: "Ada" }, options), pool.render("v2", culpritSources, exhausting(), options)]);
    expect(innocent).toEqual({ ok: true, rendered: { subject: "Hi Ada", html: "<p>Ada</p>", text: null } });
    expect(culprit).toMatchObject({ ok: false, phase: "render", problems: [{ field: "html", message: expect.stringMatching(/^could not be rendered/) }] });
    // And the pool renders on.
    expect(await pool.render("v1", innocentSources, { name: "Bo" }, options)).toMatchObject({ ok: true, rendered: { html: "<p>Bo</p>" } });
  }, 120_000);

  it("answers a check past the hard timeout as a template too complex to check, in the field it was in", async () => {
    pool = new RenderPool({ size: 1, timeoutMs: 50, workerHeapMb: 64, limits: { ...limits, parseLimit: 1_000_000 } });
    // About 530,000 characters: parsing alone takes longer than 50 ms.
    const text = Array.from({ length: 20_000 }, (_, i) => `{{ v${i}.name }}`).join("\n");
    expect(await pool.check({ subject: "Hi", html: "<p>Hi</p>", text })).toEqual({
      problems: [{ field: "text", line: null, message: "is too complex to check within 50 ms: use fewer tags and outputs, or fewer characters" }],
      referenced: {},
    });
  }, 60_000);

  it("refuses variables past 1 MiB as JSON before a worker sees them", async () => {
    pool = new RenderPool({ size: 1, timeoutMs: 20_000, workerHeapMb: 32, limits });
    const [refused, rendered] = await Promise.all([pool.render("v2", culpritSources, exhausting(), options), pool.render("v1", innocentSources, { name: "Ada" }, options)]);
    expect(refused).toEqual({ ok: false, phase: "variables", bytes: 4_500_009, limit: 1_048_576 });
    expect(rendered).toMatchObject({ ok: true, rendered: { html: "<p>Ada</p>" } });
    const atTheLimit = { big: "x".repeat(1_048_576 - '{"big":""}'.length) };
    expect(await pool.render("v2", culpritSources, atTheLimit, options)).toMatchObject({ ok: true, rendered: { html: String(atTheLimit.big.length) } });
    expect(await pool.render("v2", culpritSources, { big: `${atTheLimit.big}x` }, options)).toMatchObject({ ok: false, phase: "variables", bytes: 1_048_577 });
  }, 120_000);
});
