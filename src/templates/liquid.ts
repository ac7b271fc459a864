import { Liquid, LiquidError, type Template } from "liquidjs";

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
 * subject and text are plain text and not escaped. `ownPropertyOnly` keeps templates away from
 * prototypes (`{{ user.constructor }}` is empty), `strictFilters` makes a misspelt filter a syntax
 * error at save time instead of silently empty output, and the limits bound the work a template
 * can ask for. Dates render in UTC so a template renders the same on every node.
 */
export function createEngines(limits: RenderLimits): Record<"html" | "plain", Liquid> {
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
  const engines = { html: new Liquid({ ...options, outputEscape: "escape" }), plain: new Liquid(options) };
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

/** Parses every field, collecting each field's first syntax error. */
export function parseAll(engines: Record<"html" | "plain", Liquid>, sources: TemplateSources): { templates: Partial<Record<TemplateField, Template[]>>; problems: FieldProblem[] } {
  const templates: Partial<Record<TemplateField, Template[]>> = {};
  const problems: FieldProblem[] = [];
  for (const field of ["subject", "html", "text"] as const) {
    const source = sources[field];
    if (source === null) continue;
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
export function globalsOf(engines: Record<"html" | "plain", Liquid>, templates: Partial<Record<TemplateField, Template[]>>): Partial<ReferencedVariables> {
  const names: Partial<ReferencedVariables> = {};
  for (const [field, template] of Object.entries(templates) as Array<[TemplateField, Template[]]>) {
    // Partials cannot exist here (FILE_TAGS): there is nothing else to analyse.
    names[field] = engines[engineFor(field)].globalVariablesSync(template, { partials: false });
  }
  return names;
}
