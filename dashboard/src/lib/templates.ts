import { APIConnectionError, APIError, type RequestBody, type Template, type TemplateVariable, type TemplateVersionState } from "mailroom";

/** Said on every template page: the environment switch does not apply to templates (DESIGN §6). */
export const TEMPLATES_SCOPE_NOTE = "Templates belong to the workspace: live and sandbox both send them, so what you tried in sandbox is what goes live.";

/**
 * Where a layout puts the content of each template sent in it (docs/templates.md#layouts): said
 * wherever a layout's html is written, since a layout without it is refused.
 */
export const LAYOUT_CONTENT_SLOT = "{{ content }}";

export type VariableType = TemplateVariable["type"];

/** Every declarable type (the contract's TemplateVariable.type). */
export const VARIABLE_TYPES = ["string", "number", "boolean", "object", "array"] as const satisfies readonly VariableType[];

// Fails to compile when the contract gains a type this list lacks.
type Missing = Exclude<VariableType, (typeof VARIABLE_TYPES)[number]>;
export const _everyTypeListed: [Missing] extends [never] ? true : never = true;

export function isVariableType(value: string): value is VariableType {
  return (VARIABLE_TYPES as readonly string[]).includes(value);
}

export const VERSION_STATE_LABELS: Record<TemplateVersionState, string> = { draft: "Draft", published: "Published", archived: "Archived" };

/** A variable as the editor's form holds it: every field a string, the default as typed. */
export interface VariableRow {
  /** Stable across edits, for React's keys; never sent. */
  key: number;
  name: string;
  type: VariableType;
  required: boolean;
  /** As typed: a string variable's default verbatim, any other type's as JSON. Empty for none. */
  defaultText: string;
  /**
   * The default is the empty string, which the empty defaultText cannot tell from none (and
   * Liquid can: "" is truthy, none is not). As loaded, until the default is edited (defaultEdit).
   */
  emptyDefault: boolean;
  description: string;
  /**
   * The description as loaded (null: none). While the field still shows it, it is sent back
   * verbatim (an empty one, spaces around it), so opening a template does not change it.
   */
  loadedDescription: string | null;
}

let nextKey = 0;

export function toRow(variable?: TemplateVariable): VariableRow {
  nextKey += 1;
  const value: unknown = variable?.default;
  return {
    key: nextKey,
    name: variable?.name ?? "",
    type: variable?.type ?? "string",
    required: variable?.required ?? false,
    defaultText: value === undefined || value === null ? "" : variable?.type === "string" && typeof value === "string" ? value : JSON.stringify(value),
    emptyDefault: value === "",
    description: variable?.description ?? "",
    loadedDescription: variable?.description ?? null,
  };
}

/** What typing `text` into a row's default changes: an emptied field then means no default. */
export function defaultEdit(text: string): Pick<VariableRow, "defaultText" | "emptyDefault"> {
  return { defaultText: text, emptyDefault: false };
}

/** A field the page can point at before the server is asked: the row's default is not valid JSON. */
export class VariableInputError extends Error {
  constructor(
    readonly pointer: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The rows as the contract's declarations. A required variable has no default (the contract's
 * rule), so a default typed there is dropped; the server checks that a default has its type.
 */
export function toVariables(rows: readonly VariableRow[]): TemplateVariable[] {
  return rows.map((row, index) => {
    const variable: TemplateVariable = { name: row.name.trim(), type: row.type, required: row.required };
    // An edited description loses the spaces around it; an emptied one is none.
    const description = row.loadedDescription !== null && row.description === row.loadedDescription ? row.loadedDescription : row.description.trim();
    if (description || row.loadedDescription === description) variable.description = description;
    if (!row.required && row.type === "string" && row.defaultText === "" && row.emptyDefault) variable.default = "";
    else if (!row.required && row.defaultText !== "") {
      if (row.type === "string") variable.default = row.defaultText;
      else {
        try {
          variable.default = JSON.parse(row.defaultText) as unknown;
        } catch {
          throw new VariableInputError(`/variables/${index}/default`, `The default of ${variable.name || `variable ${index + 1}`} is not valid JSON.`);
        }
      }
    }
    return variable;
  });
}

/**
 * Variable values typed as JSON (the preview's sample values, a test send's variables): an
 * object, or a VariableInputError at `pointer` saying what is expected.
 */
export function parseVariableValues(text: string, pointer: string, what: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Said below, as for any other value that is not an object.
  }
  throw new VariableInputError(pointer, `${what} must be a JSON object, such as {"first_name": "Ada"}.`);
}

// A value of each type for a required variable without a default, so a preview renders at once.
const SAMPLE_BY_TYPE: Record<VariableType, (name: string) => unknown> = {
  string: (name) => name.replace(/_/g, " "),
  number: () => 1,
  boolean: () => true,
  object: () => ({}),
  array: () => [],
};

/** Sample values for a preview: each variable's default, or a value of its type when it has none. */
export function sampleValues(variables: readonly TemplateVariable[]): Record<string, unknown> {
  return Object.fromEntries(
    variables.filter((variable) => variable.name).map((variable) => [variable.name, variable.default ?? SAMPLE_BY_TYPE[variable.type](variable.name)]),
  );
}

/**
 * The preview's sample values, derived from the declarations: the template's own; on a layout's
 * page with a template previewed in it (Preview with), the layout's and that template's, the
 * template's winning on a name both declare, as the server resolves them when rendering.
 */
export function previewSamples(variables: readonly TemplateVariable[], previewWith: Pick<Template, "variables"> | null): Record<string, unknown> {
  return { ...sampleValues(variables), ...sampleValues(previewWith?.variables ?? []) };
}

/** The version a preview shows: the latest, i.e. the draft when there is one (or nothing is published yet), else the published one. */
export function latestVersionOf(template: Pick<Template, "has_draft" | "published_version">): number | "draft" {
  return template.has_draft || template.published_version === null ? "draft" : template.published_version;
}

/**
 * renderTemplate's slug and body for the editor's preview: the page's template by itself; or, on
 * a layout's page with a template chosen in Preview with, that template in the layout's version
 * being edited, to see what publishing the layout would send. The template is listed because its
 * published version or its draft is sent in the layout: its latest version when that one is (the
 * wire's `layout` is the latest's), else its published one.
 */
export function previewRenderRequest(
  page: Pick<Template, "slug" | "has_draft" | "published_version">,
  previewWith: Pick<Template, "slug" | "has_draft" | "published_version" | "layout"> | null,
  variables: Record<string, unknown>,
): { slug: string; body: RequestBody<"renderTemplate"> } {
  if (previewWith === null) return { slug: page.slug, body: { version: latestVersionOf(page), variables } };
  const version = previewWith.layout === page.slug || previewWith.published_version === null ? latestVersionOf(previewWith) : previewWith.published_version;
  return { slug: previewWith.slug, body: { version, layout_version: latestVersionOf(page), variables } };
}

/** The content a draft is made of: what updateTemplate changes, and what the editor compares. */
export interface TemplateContent {
  subject: string;
  html: string;
  /** Empty: derived from the html (null on the wire). */
  text: string;
  /** The slug of the layout it is sent in; absent or null for none (always none for a layout). */
  layout?: string | null;
  variables: TemplateVariable[];
}

export function contentOf(template: Pick<Template, "subject" | "html" | "text" | "variables"> & Partial<Pick<Template, "layout">>): TemplateContent {
  return { subject: template.subject, html: template.html, text: template.text ?? "", layout: template.layout ?? null, variables: template.variables };
}

// One spelling per meaning (absent, null and false alike), so that what the server answers and
// what the form produces compare equal when nothing was changed.
function canonical(content: TemplateContent): string {
  const variables = content.variables.map((variable) => [
    variable.name,
    variable.type,
    variable.required ?? false,
    variable.default ?? null,
    variable.description ?? null,
  ]);
  return JSON.stringify([content.subject, content.html, content.text, content.layout ?? null, variables]);
}

export function sameContent(a: TemplateContent, b: TemplateContent): boolean {
  return canonical(a) === canonical(b);
}

/**
 * updateTemplate's fields for the content: an empty text goes back to being derived from the
 * html. A layout has no subject and is not itself sent in a layout: the server refuses either.
 */
function draftFields(kind: Template["kind"], content: TemplateContent) {
  const body = { html: content.html, text: content.text === "" ? null : content.text, variables: content.variables };
  return kind === "layout" ? body : { ...body, subject: content.subject, layout: content.layout ?? null };
}

/**
 * updateTemplate's body to save the editor's content on `base` (the template as the server last
 * answered the editor): the content when it differs from base's latest version, the name when
 * given and changed; null when there is nothing to save. It is always based on base's revision
 * (base_revision), so a save made after someone else saved or published is refused (409
 * template_changed) rather than putting back what the editor read. With `check`, it is sent even
 * with nothing to save, to make sure the template is still the one the editor shows (before a
 * publish).
 */
export function draftUpdate(
  base: Pick<Template, "kind" | "name" | "revision" | "subject" | "html" | "text" | "layout" | "variables">,
  content: TemplateContent,
  { name, check = false }: { name?: string; check?: boolean } = {},
): RequestBody<"updateTemplate"> | null {
  const changes = {
    ...(sameContent(content, contentOf(base)) ? {} : draftFields(base.kind, content)),
    ...(name !== undefined && name !== base.name ? { name } : {}),
  };
  if (Object.keys(changes).length === 0 && !check) return null;
  return { ...changes, base_revision: base.revision };
}

/**
 * What became of a save (draftUpdate's body) that failed with `error`. After no answer or a 5xx
 * its outcome is unknown, and the SDK does not send it again (a repeat of a stored edit would be
 * refused as someone else's change): the template is read again (`reread`), and when it holds
 * the content and name sent, the save was stored and that is its answer. Otherwise, or after any
 * other error, the error is thrown: nothing is taken for saved, and a change someone else made is
 * found by the next save's base_revision, as ever.
 */
export async function savedDespite<T extends Parameters<typeof draftUpdate>[0]>(
  error: unknown,
  reread: () => Promise<T>,
  content: TemplateContent,
  { name }: { name?: string },
): Promise<T> {
  const outcomeUnknown = error instanceof APIConnectionError || (error instanceof APIError && error.status >= 500);
  if (!outcomeUnknown) throw error;
  const template = await reread().catch(() => {
    throw error;
  });
  if (draftUpdate(template, content, { name }) !== null) throw error;
  return template;
}

/** A slug from a name, as createTemplate accepts it: "Order receipt!" -> "order-receipt". */
export function slugify(name: string): string {
  return name
    // "é" -> "e" + a combining accent, which is then dropped rather than made a hyphen.
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");
}
