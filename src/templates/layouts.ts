import type { FieldError } from "../domain/errors.js";
import type { ReferencedVariables } from "./liquid.js";
import type { components } from "../../generated/v1.js";

type TemplateKind = components["schemas"]["TemplateKind"];
type TemplateVariable = components["schemas"]["TemplateVariable"];

/**
 * The name a layout places the content of the template sent in it with: `{{ content }}`
 * (docs/templates.md#layouts). It is the layout's slot, not a variable a sender gives.
 */
export const CONTENT_SLOT = "content";

/** The fields of a version being saved, as far as its kind decides what they may be. */
export interface KindedContent {
  subject?: string | undefined;
  text?: string | null | undefined;
  layout?: string | null | undefined;
  variables?: readonly TemplateVariable[] | undefined;
}

/**
 * What a template's kind forbids or needs: a layout has no subject (the template sent in it
 * gives one), is not itself sent in a layout (no nesting to resolve or loop), and cannot declare
 * `content`; a new standard template needs a subject.
 */
export function kindProblems(kind: TemplateKind, content: KindedContent, creating: boolean): FieldError[] {
  const problems: FieldError[] = [];
  const fail = (pointer: string, message: string) => problems.push({ location: "body", pointer, message });
  if (kind === "standard") {
    if (creating && content.subject === undefined) fail("/subject", "is required (only a layout has no subject)");
    return problems;
  }
  if (content.subject !== undefined) fail("/subject", "must be left out: a layout has no subject, the template sent in it gives the subject");
  if (content.layout !== undefined && content.layout !== null) fail("/layout", "must be left out: a layout is not itself sent in a layout");
  (content.variables ?? []).forEach((variable, i) => {
    if (variable.name === CONTENT_SLOT) fail(`/variables/${i}/name`, `cannot be ${CONTENT_SLOT}: in a layout, {{ ${CONTENT_SLOT} }} is the content of the template sent in it`);
  });
  return problems;
}

/** A layout's html, and its text when it has one, must place the content: a layout without it would send mail without its message. */
export function slotProblems(kind: TemplateKind, content: KindedContent & { html?: string | undefined }, referenced: Partial<ReferencedVariables>): FieldError[] {
  if (kind !== "layout") return [];
  const problems: FieldError[] = [];
  for (const field of ["html", "text"] as const) {
    if (content[field] === undefined || content[field] === null) continue;
    if (!(referenced[field] ?? []).includes(CONTENT_SLOT)) {
      problems.push({ location: "body", pointer: `/${field}`, message: `must output {{ ${CONTENT_SLOT} }}: where the ${field} of each template sent in this layout goes` });
    }
  }
  return problems;
}

/** The variables a layout's field reads from a sender: all it uses but its slot. */
export function withoutSlot(kind: TemplateKind, names: readonly string[]): string[] {
  return kind === "layout" ? names.filter((name) => name !== CONTENT_SLOT) : [...names];
}
