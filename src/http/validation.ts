import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { FastifyRequest } from "fastify";
import type { FastifySchemaValidationError } from "fastify/types/schema.js";
import { DomainError, type FieldError } from "../domain/errors.js";
import { pointerSegment } from "../domain/json-pointer.js";
import { isClosedQuery, unknownParameterMessage } from "./closed-query.js";

// ajv-formats is CommonJS with a default export that NodeNext sees as the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * Two Ajv instances (DESIGN.md §2 traps): bodies are validated strictly (no coercion, unknown
 * fields are errors, every failure reported); path, query and headers arrive as strings and are
 * coerced to the declared types.
 */
function createAjvs() {
  // verbose: an error carries the schema it broke, so a message can say what a union's forms
  // are, or quote a pattern's own explanation (unionMessage, describe).
  const common = { strict: false, verbose: true, useDefaults: true, removeAdditional: false as const, allowUnionTypes: true };
  return {
    body: addFormats(new Ajv2020({ ...common, coerceTypes: false, allErrors: true })),
    params: addFormats(new Ajv2020({ ...common, coerceTypes: "array", allErrors: true })),
  };
}

type Validate = ReturnType<Ajv2020["compile"]>;

let ajvs: ReturnType<typeof createAjvs> | null = null;
/**
 * Compiled validators by request part and schema, kept for the process. A validator is a pure
 * function of its schema; compiling the contract's ~140 takes a few hundred milliseconds, which a
 * process that builds its app once pays once, and tests, which build one per test, pay once too.
 */
const compiled = new Map<string, Validate>();

export function createValidators() {
  ajvs ??= createAjvs();
  const { body, params } = ajvs;
  return {
    compile({ schema, httpPart }: { schema: object; httpPart?: string }): Validate {
      const part = httpPart === "body" ? "body" : httpPart === "headers" ? "headers" : "params";
      const key = `${part}\u0000${JSON.stringify(schema)}`;
      let validate = compiled.get(key);
      if (!validate) {
        const coerced = part === "headers" ? lowerCaseHeaderSchema(schema) : schema;
        validate = part === "body" ? body.compile(schema) : integersInDigits(coerced, params.compile(coerced));
        compiled.set(key, validate);
      }
      return validate;
    },
  };
}

/** An integer as a query, path or header value: digits, with an optional sign. */
const DIGITS = /^[+-]?[0-9]+$/;

/**
 * Ajv coerces a string to an integer when `x == +x`, and JavaScript's `+` trims whitespace (NBSP
 * included) and reads `7.0`, `1e1` and `0x10`: `?limit=7%C2%A0` was page size 7. An integer
 * parameter is refused unless it is written in digits, as clients write one and as other servers
 * (and Schemathesis) read one; what passes is then coerced by Ajv as before.
 */
function integersInDigits(schema: object, validate: Validate): Validate {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integers = Object.keys(properties).filter((name) => {
    const type = properties[name]?.type;
    return type === "integer" || (Array.isArray(type) && type.includes("integer"));
  });
  if (integers.length === 0) return validate;
  const checked = ((data: Record<string, unknown> | undefined) => {
    const loose = integers.find((name) => [data?.[name]].flat().some((value) => typeof value === "string" && !DIGITS.test(value)));
    if (loose === undefined) {
      const valid = validate(data);
      checked.errors = validate.errors;
      return valid;
    }
    checked.errors = [{ instancePath: `/${pointerSegment(loose)}`, schemaPath: `#/properties/${pointerSegment(loose)}/type`, keyword: "type", params: { type: "integer" }, message: "must be integer" }];
    return false;
  }) as Validate;
  return checked;
}

/**
 * Node lower-cases request header names. Fastify lower-cases header schemas itself only when
 * its own compiler is used; with a custom one (ours) `Idempotency-Key` would never match and
 * header validation would silently pass everything.
 */
function lowerCaseHeaderSchema(schema: object): object {
  const { properties, required, ...rest } = schema as { properties?: Record<string, unknown>; required?: string[] };
  return {
    ...rest,
    ...(properties ? { properties: Object.fromEntries(Object.entries(properties).map(([name, value]) => [name.toLowerCase(), value])) } : {}),
    ...(required ? { required: required.map((name) => name.toLowerCase()) } : {}),
  };
}

/**
 * preValidation for operations that take a body. Fastify validates a body against the schema of
 * its media type, and a request sent without one has none, so a missing body would reach the
 * handler unvalidated: a required body is refused here; a missing optional one becomes `{}`
 * (valid for an optional body by definition), so handlers see an object either way.
 */
export function bodyPresence(body: "required" | "optional") {
  return async function presence(req: FastifyRequest): Promise<void> {
    if (req.body !== undefined) return;
    if (body === "optional") {
      req.body = {};
      return;
    }
    throw new DomainError("unprocessable", "validation_failed", "Validation failed", "The request body is required: send a JSON object as application/json.", {
      errors: [{ location: "body", pointer: "", message: "is required" }],
    });
  };
}

const LOCATION: Record<string, FieldError["location"]> = { body: "body", querystring: "query", params: "path", headers: "header" };

/** Ajv errors as one entry per failing field, with a JSON pointer into the request part. */
export function validationErrors(errors: FastifySchemaValidationError[], context: string | undefined): FieldError[] {
  const location = LOCATION[context ?? "body"] ?? "body";
  const list = withoutOtherForms(errors as unknown as ErrorObject[]);
  // For "one of these forms" fields, the branch-by-branch type errors are noise next to the
  // oneOf/anyOf error at the same pointer, which says it better.
  const unionPointers = new Set(list.filter(isUnion).map((e) => e.instancePath));
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of list) {
    if (unionPointers.has(error.instancePath) && !isUnion(error)) continue;
    const { pointer, message } = isUnion(error) ? { pointer: error.instancePath, message: unionMessage(error, list) } : describe(error);
    // A name refused by propertyNames comes twice: as the rule it broke (Ajv reports it first,
    // with the name as `propertyName`), then as propertyNames; the first says more.
    if (error.keyword === "propertyNames" && out.some((e) => e.pointer === pointer)) continue;
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    // One entry per field: a value that broke two rules (too short, and not the pattern) says both.
    const field = out.find((e) => e.pointer === pointer);
    if (field) field.message = `${field.message}; ${message}`;
    else out.push({ location, pointer, message });
  }
  return out;
}

const isUnion = (error: ErrorObject) => error.keyword === "oneOf" || error.keyword === "anyOf";

/** A union error's forms (its oneOf/anyOf list), and the errors each of them gave, by the form's place in the schema. */
function formsOf(union: ErrorObject, list: ErrorObject[]): { forms: Schema[]; failures: ErrorObject[][] } {
  const forms = Array.isArray(union.schema) ? (union.schema as Schema[]) : [];
  return { forms, failures: forms.map((_, index) => list.filter((e) => e.schemaPath.startsWith(`${union.schemaPath}/${index}/`))) };
}

/**
 * A union whose value has the type of exactly one of its forms (a string where an address or a
 * list of addresses goes) was meant as that form: only that form's errors are kept, each at its
 * own pointer (`/to/1`), without the union's "must be string, or be array" or the other forms'
 * complaints. A value of no form's type, or of several (two object forms), keeps them all, and
 * the union's own message says what the forms are; so do forms that are each a few words.
 */
function withoutOtherForms(list: ErrorObject[]): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  for (const union of list.filter(isUnion)) {
    const { forms, failures } = formsOf(union, list);
    // Forms that each say themselves in a few words (an integer from 1 to 10, or null) read best together.
    if (forms.every((form) => valueForm(form) !== null)) continue;
    const typed = failures.filter((found) => !found.some((e) => e.keyword === "type" && e.instancePath === union.instancePath));
    if (typed.length !== 1 || typed[0]!.length === 0) continue;
    dropped.add(union);
    for (const found of failures) if (found !== typed[0]) for (const e of found) dropped.add(e);
  }
  return dropped.size === 0 ? list : list.filter((e) => !dropped.has(e));
}

function describe(error: ErrorObject): { pointer: string; message: string } {
  const params = error.params as Record<string, unknown>;
  if (error.propertyName !== undefined) return { pointer: `${error.instancePath}/${pointerSegment(error.propertyName)}`, message: `the name ${patternInWords(error) ?? error.message ?? "is invalid"}` };
  switch (error.keyword) {
    case "required":
      return { pointer: `${error.instancePath}/${pointerSegment(String(params.missingProperty))}`, message: "is required" };
    case "additionalProperties":
      return {
        pointer: `${error.instancePath}/${pointerSegment(String(params.additionalProperty))}`,
        message: isClosedQuery(error.parentSchema) ? unknownParameterMessage(error.parentSchema) : "is not a known field",
      };
    case "enum":
      return { pointer: error.instancePath, message: `must be one of: ${allowedValues([error]).join(", ")}` };
    case "pattern":
      return { pointer: error.instancePath, message: patternInWords(error) ?? error.message ?? "is invalid" };
    case "minProperties": {
      // Ajv says "must NOT have fewer than 1 properties"; the contract's objects have fields.
      const limit = Number(params.limit);
      return { pointer: error.instancePath, message: limit === 1 ? "must have at least one field" : `must have at least ${limit} fields` };
    }
    case "propertyNames":
      return { pointer: `${error.instancePath}/${pointerSegment(String(params.propertyName))}`, message: "is not an allowed name" };
    default:
      return { pointer: error.instancePath, message: error.message ?? "is invalid" };
  }
}

/**
 * A pattern error in the contract's words (x-mailroom-pattern-message): a regular expression is
 * no answer to a person who sent a wrong value.
 */
function patternInWords(error: ErrorObject): string | null {
  if (error.keyword !== "pattern") return null;
  const explained = (error.parentSchema as Record<string, unknown> | undefined)?.["x-mailroom-pattern-message"];
  return typeof explained === "string" ? explained : null;
}

type Schema = Record<string, unknown>;

/**
 * What a oneOf/anyOf field must be. When every form can be said in a few words (null, a number
 * range, required fields) the message lists them; otherwise it says what each form found wrong.
 */
function unionMessage(error: ErrorObject, list: ErrorObject[]): string {
  const { forms, failures } = formsOf(error, list);
  const passing = (error.params as { passingSchemas?: number[] | null }).passingSchemas;
  const fieldSets = forms.map(requiredOnly);
  if (forms.length > 1 && fieldSets.every((set) => set !== null)) {
    const sets = fieldSets.map((set) => set!.join(" and "));
    return Array.isArray(passing) ? `must have ${sets.join(", or ")}, not more than one of these` : `must have ${sets.join(", or ")}`;
  }
  if (Array.isArray(passing)) return "matches more than one of the allowed forms; it must match exactly one";
  const values = forms.map(valueForm);
  if (forms.length > 0 && values.every((value) => value !== null)) return `must be ${values.join(", or ")}`;
  // Forms that each are a list of values (two enums) read best as one list.
  if (failures.length > 0 && failures.every((found) => found.length > 0 && found.every((e) => e.keyword === "enum"))) {
    return `must be one of: ${allowedValues(failures.flat()).join(", ")}`;
  }
  const said = failures.map((found) => found.map((e) => describe(e).message.replace(/^must /, "")).join(" and ")).filter((text) => text !== "");
  return said.length > 0 ? `must ${said.join(", or ")}` : "does not match any of the allowed forms";
}

/** The fields a form requires, when requiring them is all it does (an attachment's content or url). */
function requiredOnly(form: Schema): string[] | null {
  const keys = Object.keys(form);
  return keys.length === 1 && Array.isArray(form.required) ? (form.required as string[]) : null;
}

/** A value form in words (null, an integer from 1 to 10, "draft"), or null when it says more than that. */
function valueForm(form: Schema): string | null {
  const { type, minimum, maximum, enum: values, ...rest } = form;
  if (Object.keys(rest).length > 0) return null;
  if (type === "null") return "null";
  if (Array.isArray(values)) return values.map((value) => JSON.stringify(value)).join(" or ");
  if (type === "integer" || type === "number") {
    const noun = type === "integer" ? "an integer" : "a number";
    if (typeof minimum === "number" && typeof maximum === "number") return `${noun} from ${minimum} to ${maximum}`;
    if (typeof minimum === "number") return `${noun} of at least ${minimum}`;
    if (typeof maximum === "number") return `${noun} of at most ${maximum}`;
    return noun;
  }
  return null;
}

/** The values enum errors allow, each once, as the request would spell them. */
function allowedValues(errors: ErrorObject[]): string[] {
  const values = errors.flatMap((e) => (e.params as { allowedValues?: unknown[] }).allowedValues ?? []);
  return [...new Set(values.map((value) => (typeof value === "string" ? value : JSON.stringify(value))))];
}
