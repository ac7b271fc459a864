import { parentPort, workerData } from "node:worker_threads";
import type { Template } from "liquidjs";
import { textFromHtml } from "../domain/text-from-html.js";
import { createEngines, engineFor, globalsOf, lineOf, messageOf, parseAll, type FieldProblem, type RenderLimits, type TemplateField, type TemplateSources } from "./liquid.js";
import { WorkerProgress, type RenderRequest, type RenderResponse } from "./render-protocol.js";

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
  const result = parseAll(engines, sources);
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
  if (request.kind === "check") return { id: request.id, ok: true, rendered: null, referenced: globalsOf(engines, templates) };
  const rendered: Record<TemplateField, string | null> = { subject: null, html: null, text: null };
  for (const field of ["subject", "html", "text"] as const) {
    const template = templates[field];
    if (template === undefined) continue;
    // Read by the pool when this job overruns its hard timeout, to name the field.
    progress.enter(field);
    try {
      const output = String(engines[engineFor(field)].renderSync(template, request.variables));
      if (output.length > limits.maxOutputChars) {
        return { id: request.id, ok: false, phase: "render", problems: [{ field, line: null, message: `renders to more than ${limits.maxOutputChars} characters` }] };
      }
      rendered[field] = output;
    } catch (error) {
      return { id: request.id, ok: false, phase: "render", problems: [{ field, line: lineOf(error), message: messageOf(error) }] };
    }
  }
  const text = rendered.text ?? (request.deriveText ? textFromHtml(rendered.html!) : null);
  return { id: request.id, ok: true, rendered: { subject: rendered.subject!, html: rendered.html!, text }, referenced: null };
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
