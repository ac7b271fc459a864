import type { FieldProblem, ReferencedVariables, TemplateField, TemplateSources } from "./liquid.js";

/** What the pool asks a render worker: parse and analyse (`check`), or parse and render. */
export interface RenderRequest {
  id: number;
  kind: "check" | "render";
  /** The version's cache key (`tpl_…@3`), or null for sources not worth caching. */
  key: string | null;
  sources: TemplateSources;
  variables: Record<string, unknown>;
  /** Derive the text from the rendered html when the version has no text. */
  deriveText: boolean;
  /** The layout the rendered html and text are placed in, if the version has one. */
  layout: LayoutSources | null;
}

/** A layout's version, for the worker to put a rendered template in (docs/templates.md#layouts). */
export interface LayoutSources {
  /** Its cache key (`tpl_…@4`). */
  key: string;
  /** Named in its problems. */
  slug: string;
  html: string;
  text: string | null;
}

/** What a render is asked beside the sources and variables. */
export interface RenderOptions {
  deriveText: boolean;
  layout: LayoutSources | null;
}

export interface RenderedSources {
  subject: string;
  html: string;
  text: string | null;
}

/** Sent once by a worker when it has loaded and can take jobs. */
export interface WorkerReady {
  ready: true;
}

export type RenderResponse =
  // A check answers the variables each field reads, a render its output.
  | { id: number; ok: true; rendered: RenderedSources | null; referenced: Partial<ReferencedVariables> | null }
  | { id: number; ok: false; phase: "syntax" | "render"; problems: FieldProblem[] };

/** The field a worker is rendering, as WorkerProgress stores it (0: none). */
const FIELD_CODES: Record<TemplateField, number> = { subject: 1, html: 2, text: 3 };
const FIELD_OF_CODE: Record<number, TemplateField> = { 1: "subject", 2: "html", 3: "text" };

/**
 * What a worker is doing, shared with the pool through a SharedArrayBuffer the worker writes and
 * the pool reads when a job may have overrun its hard timeout: the running job, since when, and
 * the field it is in.
 */
export class WorkerProgress {
  private readonly ints: Int32Array;
  private readonly started: Float64Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(16)) {
    this.ints = new Int32Array(buffer, 0, 2);
    this.started = new Float64Array(buffer, 8, 1);
  }

  begin(jobId: number): void {
    Atomics.store(this.ints, 1, 0);
    this.started[0] = Date.now();
    Atomics.store(this.ints, 0, jobId);
  }

  enter(field: TemplateField): void {
    Atomics.store(this.ints, 1, FIELD_CODES[field]);
  }

  get jobId(): number {
    return Atomics.load(this.ints, 0);
  }

  get startedAt(): number {
    return this.started[0]!;
  }

  get field(): TemplateField | undefined {
    return FIELD_OF_CODE[Atomics.load(this.ints, 1)];
  }
}
