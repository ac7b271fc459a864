import { randomUUID } from "node:crypto";
import { parentPort, workerData } from "node:worker_threads";
import type { Template } from "liquidjs";
import { textFromHtml } from "../domain/text-from-html.js";
import { createEngines, engineFor, globalsOf, lineOf, messageOf, parseAll, type FieldProblem, type RenderLimits, type TemplateField, type TemplateSources } from "./liquid.js";
import { CONTENT_SLOT } from "./layouts.js";
import { WorkerProgress, type LayoutSources, type RenderRequest, type RenderResponse } from "./render-protocol.js";

/**
 * One render worker: parses and renders Liquid on its own thread, one job at a time, so a
 * template that runs past its limits stalls this thread only; the pool terminates it after the
 * hard timeout. Parsed templates are cached by version key, so repeated sends do not re-parse.
 */
const { limits, progress: progressBuffer } = workerData as { limits: RenderLimits; progress: SharedArrayBuffer };
const progress = new WorkerProgress(progressBuffer);
const engines = createEngines(limits);
const CACHE_ENTRIES = 500;
const cache = new Map<string, { sources: TemplateSources; templates: Partial<Record<TemplateField, Template[]>> }>();

function parsed(key: string | null, sources: TemplateSources): { templates: Partial<Record<TemplateField, Template[]>>; problems: FieldProblem[] } {
  const hit = key === null ? undefined : cache.get(key);
  // A draft is edited in place under the same key: the cached parse only serves the same sources.
  if (hit && hit.sources.subject === sources.subject && hit.sources.html === sources.html && hit.sources.text === sources.text) {
    cache.delete(key!);
    cache.set(key!, hit);
    return { templates: hit.templates, problems: [] };
  }
  // Read by the pool when a job overruns its hard timeout, to name the field.
  const result = parseAll(engines, sources, (field) => progress.enter(field));
  if (key !== null && result.problems.length === 0) {
    cache.set(key, { sources, templates: result.templates });
    if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  }
  return result;
}

function handle(request: RenderRequest): RenderResponse {
  progress.begin(request.id);
  const { templates, problems } = parsed(request.key, request.sources);
  if (problems.length > 0) return { id: request.id, ok: false, phase: "syntax", problems };
  if (request.kind === "check") return { id: request.id, ok: true, rendered: null, referenced: globalsOf(engines, templates, (field) => progress.enter(field)) };
  const rendered: Record<TemplateField, string | null> = { subject: null, html: null, text: null };
  for (const field of ["subject", "html", "text"] as const) {
    const template = templates[field];
    if (template === undefined) continue;
    const output = renderField(field, template, request.variables);
    if (!output.ok) return { id: request.id, ok: false, phase: "render", problems: [output.problem] };
    rendered[field] = output.text;
  }
  let html = rendered.html!;
  let text = rendered.text;
  if (request.layout !== null) {
    const placed = inLayout(request.layout, { html, text }, request.variables);
    if (!placed.ok) return { id: request.id, ok: false, ...placed.failure };
    ({ html, text } = placed);
  }
  text ??= request.deriveText ? textFromHtml(html) : null;
  return { id: request.id, ok: true, rendered: { subject: rendered.subject!, html, text }, referenced: null };
}

type FieldOutput = { ok: true; text: string } | { ok: false; problem: FieldProblem };

function renderField(field: TemplateField, template: Template[], variables: Record<string, unknown>): FieldOutput {
  // Read by the pool when this job overruns its hard timeout, to name the field.
  progress.enter(field);
  try {
    const output = String(engines[engineFor(field)].renderSync(template, variables));
    if (output.length > limits.maxOutputChars) return { ok: false, problem: { field, line: null, message: `renders to more than ${limits.maxOutputChars} characters` } };
    return { ok: true, text: output };
  } catch (error) {
    return { ok: false, problem: { field, line: lineOf(error), message: messageOf(error) } };
  }
}

/**
 * Places a rendered template in its layout. The layout renders with `content` standing for a
 * random marker, which is then replaced by the template's output: so `{{ content }}` needs no
 * `| raw` although html output is escaped, and the template's markup is never parsed as Liquid
 * again. A layout without text leaves the template's text (or the text derived from the whole
 * html) as it is; a layout with text wraps the template's text, or the text of its html.
 */
function inLayout(layout: LayoutSources, body: { html: string; text: string | null }, variables: Record<string, unknown>):
  | { ok: true; html: string; text: string | null }
  | { ok: false; failure: { phase: "syntax" | "render"; problems: FieldProblem[] } } {
  const { templates, problems } = parsed(layout.key, { subject: "", html: layout.html, text: layout.text });
  const inThe = (problem: FieldProblem): FieldProblem => ({ ...problem, message: `in layout ${layout.slug}: ${problem.message}` });
  if (problems.length > 0) return { ok: false, failure: { phase: "syntax", problems: problems.map(inThe) } };
  const marker = `mailroomcontent${randomUUID().replaceAll("-", "")}`;
  const scope = { ...variables, [CONTENT_SLOT]: marker };
  const place = (field: "html" | "text", content: string): FieldOutput => {
    const output = renderField(field, templates[field]!, scope);
    if (!output.ok) return { ok: false, problem: inThe(output.problem) };
    const parts = output.text.split(marker);
    // Sized before it is joined: a layout that places the content in a loop must not build a giant string first.
    const size = output.text.length - (parts.length - 1) * (marker.length - content.length);
    if (size > limits.maxOutputChars) return { ok: false, problem: inThe({ field, line: null, message: `renders to more than ${limits.maxOutputChars} characters with the content in place` }) };
    return { ok: true, text: parts.join(content) };
  };
  const html = place("html", body.html);
  if (!html.ok) return { ok: false, failure: { phase: "render", problems: [html.problem] } };
  if (layout.text === null) return { ok: true, html: html.text, text: body.text };
  const text = place("text", body.text ?? textFromHtml(body.html));
  if (!text.ok) return { ok: false, failure: { phase: "render", problems: [text.problem] } };
  return { ok: true, html: html.text, text: text.text };
}

// The pool posts the jobs it gave this worker in one task together, and gets
// their answers together: waking the other thread costs more than a render (bench/templates.ts).
parentPort!.on("message", (requests: RenderRequest[]) => {
  const responses = requests.map((request): RenderResponse => {
    try {
      return handle(request);
    } catch (error) {
      return { id: request.id, ok: false, phase: "render", problems: [{ field: "html", line: lineOf(error), message: messageOf(error) }] };
    }
  });
  parentPort!.postMessage(responses);
});

// Loaded and ready: the pool starts a job's clock only from here, so start-up never counts against it.
parentPort!.postMessage({ ready: true });
