import { CaptureTag, CycleTag, Drop, EchoTag, evalToken, filters, Liquid, LiquidError, Token, toValue, Value, type Context, type Emitter, type FilteredValueToken, type FilterImplOptions, type Template } from "liquidjs";

/** The bounds a template renders within (config.templates; docs/templates.md#limits). */
export interface RenderLimits {
  /** Longest a single field may take to parse, in characters (liquidjs parseLimit). */
  parseLimit: number;
  /** Longest liquidjs itself lets a field render, in ms (checked between nodes). */
  renderLimitMs: number;
  /** Allocation budget per field (liquidjs memoryLimit): bounds ranges, loops and string filters. */
  memoryLimit: number;
  /** Largest rendered field, in characters. */
  maxOutputChars: number;
}

export type TemplateField = "subject" | "html" | "text";
export type TemplateSources = { subject: string; html: string; text: string | null };
/** The variables each field reads from the data it is rendered with (globalsOf). */
export type ReferencedVariables = Record<TemplateField, string[]>;

/** A syntax or render error in one field, at a line of that field's source. */
export interface FieldProblem {
  field: TemplateField;
  line: number | null;
  message: string;
}

/** Tags that read other templates. Templates are self-contained: there is no file system to read. */
const FILE_TAGS = ["include", "render", "layout"] as const;

/**
 * Two engines, one configuration: html output is HTML-escaped by default (`| raw` opts out),
 * exactly once (SafeHtml); subject and text are plain text and not escaped. `ownPropertyOnly`
 * keeps templates away from prototypes (`{{ user.constructor }}` is empty), `strictFilters`
 * makes a misspelt filter a syntax error at save time instead of silently empty output, and the
 * limits bound the work a template can ask for. Dates render in UTC so a template renders the
 * same on every node.
 */
export function createEngines(limits: RenderLimits): Record<"html" | "plain", Liquid> {
  indexTokenPositions();
  const options = {
    ownPropertyOnly: true,
    strictFilters: true,
    strictVariables: false,
    parseLimit: limits.parseLimit,
    renderLimit: limits.renderLimitMs,
    memoryLimit: limits.memoryLimit,
    timezoneOffset: 0,
    // An in-memory, empty template mapping: nothing is ever read from the server's disk.
    templates: {},
  };
  const engines = { html: new Liquid({ ...options, outputEscape: escapeOutput }), plain: new Liquid(options) };
  registerSafeHtml(engines.html);
  for (const engine of Object.values(engines)) {
    for (const name of FILE_TAGS) {
      engine.registerTag(name, {
        parse() {
          throw new Error(`the ${name} tag is not available: a template cannot read other templates`);
        },
        render() {},
      });
    }
  }
  return engines;
}

/**
 * Html that is already safe to output as it is: what the html engine's escape filters answer,
 * and what its `capture` captured (template markup and escaped output). Auto-escaping passes it
 * through, so `{{ name | escape }}` and a captured `{{ name }}` are escaped once, not twice.
 * Variables come from JSON, never as a SafeHtml, so a variable is always escaped. For everything
 * else (filters, comparisons, `.size`) it is the string it holds: a Drop's valueOf is what
 * liquidjs reads, toLiquid what a property is read from; what a filter makes of it is a plain
 * string again, escaped on output, except for the few filters below that keep html safe.
 */
export class SafeHtml extends Drop {
  constructor(private readonly html: string) {
    super();
  }
  override valueOf(): string {
    return this.html;
  }
  override toString(): string {
    return this.html;
  }
  toLiquid(): string {
    return this.html;
  }
  toJSON(): string {
    return this.html;
  }
  /** The size filter reads `length` without unwrapping a Drop. */
  get length(): number {
    return this.html.length;
  }
}

type Handler = Extract<FilterImplOptions, (...args: never[]) => unknown>;
type FilterThis = ThisParameterType<Handler>;
const handlerOf = (name: string): Handler => {
  const filter = filters[name]!;
  return typeof filter === "function" ? filter : filter.handler;
};
const htmlEscape = handlerOf("escape");

/** The html engine's output escape: everything but SafeHtml. */
function escapeOutput(this: FilterThis, value: unknown): string {
  return value instanceof SafeHtml ? value.valueOf() : String(htmlEscape.call(this, value));
}

/** Filters whose output from safe html is safe html, given no arguments: they only remove whitespace at the ends, or line breaks. */
const SAFE_KEEPING_FILTERS = ["strip", "lstrip", "rstrip", "strip_newlines"];

/**
 * Teaches the html engine SafeHtml: escape filters answer it, capture stores it, a few filters
 * keep it, and echo and cycle (which unwrap a value before escaping it, unlike `{{ }}`) pass it
 * through as output does. The echo and cycle bodies follow liquidjs 10's own (pinned).
 */
function registerSafeHtml(engine: Liquid): void {
  for (const name of ["escape", "escape_once", "xml_escape"]) {
    const handler = handlerOf(name);
    engine.registerFilter(name, function (this: FilterThis, value: unknown, ...args: unknown[]) {
      return new SafeHtml(String(handler.call(this, value, ...args)));
    });
  }
  for (const name of SAFE_KEEPING_FILTERS) {
    const handler = handlerOf(name);
    engine.registerFilter(name, function (this: FilterThis, value: unknown, ...args: unknown[]) {
      const output: unknown = handler.call(this, value, ...args);
      // With characters to strip (liquidjs' second argument) it may cut into markup: plain text then.
      return value instanceof SafeHtml && args.length === 0 && typeof output === "string" ? new SafeHtml(output) : output;
    });
  }
  const byDefault = handlerOf("default");
  engine.registerFilter("default", function (this: FilterThis, value: unknown, ...args: unknown[]) {
    const output: unknown = byDefault.call(this, value, ...args);
    // The value itself (not empty), still safe; a default given instead is escaped as any value.
    return value instanceof SafeHtml && output === value.valueOf() ? value : output;
  });
  engine.registerTag("capture", SafeCaptureTag);
  engine.registerTag("echo", SafeEchoTag);
  engine.registerTag("cycle", SafeCycleTag);
}

class SafeCaptureTag extends CaptureTag {
  override *render(ctx: Context): Generator<unknown, void, string> {
    const html = yield this.liquid.renderer.renderTemplates(this.templates, ctx);
    ctx.bottom()[this.variable] = new SafeHtml(html);
  }
}

/** Writes a tag's value as output does: escaped unless its last filter is raw or it is SafeHtml. */
function* written(value: Value, ctx: Context, tag: EchoTag | CycleTag): Generator<unknown, unknown, unknown> {
  const output = yield value.value(ctx, false);
  if (value.filters[value.filters.length - 1]?.raw) return toValue(output);
  return escapeOutput.call({ context: ctx, token: tag.token as unknown as FilterThis["token"], liquid: tag.liquid }, output);
}

class SafeEchoTag extends EchoTag {
  override *render(ctx: Context, emitter: Emitter): Generator<unknown, void, unknown> {
    // EchoTag's own (private) parse of `{% echo value | filters %}`.
    const { value } = this as unknown as { value?: Value };
    if (value) emitter.write(yield* written(value, ctx, this));
  }
}

class SafeCycleTag extends CycleTag {
  override *render(ctx: Context): Generator<unknown, unknown, unknown> {
    // CycleTag's own (private) parse of `{% cycle group: a, b %}`, and its own bookkeeping.
    const { candidates, group } = this as unknown as { candidates: FilteredValueToken[]; group?: Token };
    const name = yield evalToken(group, ctx);
    const fingerprint = `cycle:${String(name)}:` + candidates.map((c) => c.getText()).join(",");
    const groups = ctx.getRegister<Record<string, number>>("cycle", {});
    const index = groups[fingerprint] ?? 0;
    groups[fingerprint] = (index + 1) % candidates.length;
    return yield* written(new Value(candidates[index]!, this.liquid), ctx, this);
  }
}

/** The newline offsets of the source a position was last asked of (the field being parsed or analysed). */
let lines: { input: string; newlines: number[] } = { input: "", newlines: [] };

/**
 * liquidjs' Token#getPosition counts lines by scanning the source from its start, and its static
 * analysis (globalsOf) asks it for every variable: quadratic, 3 s for a 150 KB template of 6,000
 * outputs, which a save then refuses as too complex. The same answer from an index of the
 * source's newlines (row: newlines before the token, plus one; column: characters since the last
 * one, plus one) is linear. liquidjs offers no option for it, hence the replacement.
 */
function indexTokenPositions(): void {
  Token.prototype.getPosition = function (this: Token): [number, number] {
    if (lines.input !== this.input) {
      const newlines: number[] = [];
      for (let i = this.input.indexOf("\n"); i !== -1; i = this.input.indexOf("\n", i + 1)) newlines.push(i);
      lines = { input: this.input, newlines };
    }
    const { newlines } = lines;
    let before = 0; // newlines before this.begin (binary search)
    for (let high = newlines.length; before < high; ) {
      const middle = (before + high) >>> 1;
      if (newlines[middle]! < this.begin) before = middle + 1;
      else high = middle;
    }
    return [before + 1, this.begin - (before === 0 ? -1 : newlines[before - 1]!)];
  };
}

export const engineFor = (field: TemplateField): "html" | "plain" => (field === "html" ? "html" : "plain");

/** The line of the source a liquidjs error points at, if it says. */
export function lineOf(error: unknown): number | null {
  if (error instanceof LiquidError && error.token) {
    const [line] = error.token.getPosition();
    return typeof line === "number" && line > 0 ? line : null;
  }
  return null;
}

/** The error's own words, without the "line:1, col:5" and the source excerpt liquidjs appends. */
export function messageOf(error: unknown): string {
  const original = error instanceof LiquidError ? (error.originalError ?? error) : error;
  const text = original instanceof Error ? original.message : String(original);
  return text.replace(/,?\s*line:\d+, col:\d+[\s\S]*$/, "").trim() || "is invalid";
}

/** Parses every field, collecting each field's first syntax error; `enter` is told which field it parses. */
export function parseAll(
  engines: Record<"html" | "plain", Liquid>,
  sources: TemplateSources,
  enter: (field: TemplateField) => void = () => {},
): { templates: Partial<Record<TemplateField, Template[]>>; problems: FieldProblem[] } {
  const templates: Partial<Record<TemplateField, Template[]>> = {};
  const problems: FieldProblem[] = [];
  for (const field of ["subject", "html", "text"] as const) {
    const source = sources[field];
    if (source === null) continue;
    enter(field);
    try {
      templates[field] = engines[engineFor(field)].parse(source);
    } catch (error) {
      problems.push({ field, line: lineOf(error), message: messageOf(error) });
    }
  }
  return { templates, problems };
}

/**
 * The variables each parsed field reads from the data it is rendered with (liquidjs static
 * analysis): root names only (`order` for `{{ order.id }}`), each once, without the
 * names the template gives values itself (`assign`, `capture`, a `for` loop's variable).
 */
export function globalsOf(
  engines: Record<"html" | "plain", Liquid>,
  templates: Partial<Record<TemplateField, Template[]>>,
  enter: (field: TemplateField) => void = () => {},
): Partial<ReferencedVariables> {
  const names: Partial<ReferencedVariables> = {};
  for (const [field, template] of Object.entries(templates) as Array<[TemplateField, Template[]]>) {
    enter(field);
    // Partials cannot exist here (FILE_TAGS): there is nothing else to analyse.
    names[field] = engines[engineFor(field)].globalVariablesSync(template, { partials: false });
  }
  return names;
}
