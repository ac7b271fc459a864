import type { FieldError } from "../domain/errors.js";
import type { components } from "../../generated/v1.js";
import { pointerSegment } from "../domain/json-pointer.js";

type TemplateVariable = components["schemas"]["TemplateVariable"];
type VariableType = TemplateVariable["type"];

/** The JSON type of a value, as declarations name them (null fits none). */
function typeOf(value: unknown): VariableType | "null" {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") return "object";
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "boolean";
  return "string";
}

/**
 * The largest default a declaration may have: bytes of its UTF-8 JSON. Declarations are stored
 * with their version (migration 026: MEDIUMTEXT, 16 MiB) and copied into every render, so 100 of
 * them stay well inside both. The contract states it (TemplateVariable.default).
 */
export const DEFAULT_MAX_BYTES = 65_536;
/**
 * The most a version's defaults may hold together, in the same bytes: a render takes at most
 * 1 MiB of variables (MAX_VARIABLES_BYTES), defaults included, and a template's defaults and its
 * layout's together must leave room for the ones a send gives.
 */
export const DEFAULTS_MAX_BYTES = 262_144;

const article = (type: VariableType) => (type === "array" || type === "object" ? "an" : "a");

/** Declarations with every field spelt out, as they are stored and shown. */
export function normaliseDeclarations(variables: readonly TemplateVariable[]): TemplateVariable[] {
  return variables.map((v) => ({ name: v.name, type: v.type, required: v.required ?? false, default: v.default ?? null, description: v.description ?? null }));
}

/**
 * Checks declarations the schema cannot: unique names, a default of the declared type and size, and
 * no default on a required variable (it would never be used). Every problem, with its pointer.
 */
export function checkDeclarations(variables: readonly TemplateVariable[], base = "/variables"): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  let defaultsBytes = 0;
  variables.forEach((variable, i) => {
    if (seen.has(variable.name)) errors.push({ location: "body", pointer: `${base}/${i}/name`, message: `${variable.name} is declared twice` });
    seen.add(variable.name);
    const hasDefault = variable.default !== undefined && variable.default !== null;
    if (hasDefault && variable.required) errors.push({ location: "body", pointer: `${base}/${i}/default`, message: "a required variable has no default" });
    else if (hasDefault && typeOf(variable.default) !== variable.type) errors.push({ location: "body", pointer: `${base}/${i}/default`, message: `must be ${article(variable.type)} ${variable.type}` });
    else if (hasDefault) {
      const bytes = Buffer.byteLength(JSON.stringify(variable.default), "utf8");
      defaultsBytes += bytes;
      if (bytes > DEFAULT_MAX_BYTES) errors.push({ location: "body", pointer: `${base}/${i}/default`, message: `is ${bytes.toLocaleString("en-US")} bytes as JSON; a default is at most ${DEFAULT_MAX_BYTES.toLocaleString("en-US")} (64 KiB)` });
    }
  });
  if (defaultsBytes > DEFAULTS_MAX_BYTES) {
    errors.push({ location: "body", pointer: base, message: `hold defaults of ${defaultsBytes.toLocaleString("en-US")} bytes as JSON together; a version's defaults are at most ${DEFAULTS_MAX_BYTES.toLocaleString("en-US")} (256 KiB) together` });
  }
  return errors;
}

/**
 * The values a version renders with: the given ones over the declared defaults. Declared
 * variables are checked against their declarations. A variable the template uses without
 * declaring it is taken as given, untyped and optional (left out, it renders empty), so a
 * template works without declarations; only a variable that is neither declared nor used is
 * refused, as a misspelling or a leftover. Lists every missing required variable, every extra
 * one and every one of the wrong type at once, so a caller fixes its request in one round trip.
 */
export function resolveValues(declared: readonly TemplateVariable[], referenced: readonly string[], given: Record<string, unknown>, base: string): { values: Record<string, unknown>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const values: Record<string, unknown> = Object.create(null);
  const byName = new Map(declared.map((variable) => [variable.name, variable]));
  const used = new Set(referenced);
  for (const variable of declared) {
    const value = Object.hasOwn(given, variable.name) ? given[variable.name] : undefined;
    const pointer = `${base}/${pointerSegment(variable.name)}`;
    if (value === undefined || value === null) {
      if (variable.required) errors.push({ location: "body", pointer, message: "is required" });
      else values[variable.name] = variable.default ?? null;
    } else if (typeOf(value) !== variable.type) {
      errors.push({ location: "body", pointer, message: `must be ${article(variable.type)} ${variable.type}` });
    } else {
      values[variable.name] = value;
    }
  }
  for (const name of Object.keys(given)) {
    if (byName.has(name)) continue;
    if (used.has(name)) values[name] = given[name];
    else errors.push({ location: "body", pointer: `${base}/${pointerSegment(name)}`, message: "is neither declared nor used by the template" });
  }
  return { values, errors };
}

