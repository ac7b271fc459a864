import type { FastifyRequest } from "fastify";
import type { FastifySchemaValidationError } from "fastify/types/schema.js";
import { ValidationError } from "../domain/errors.js";
import type { OpenApiDocument } from "./bindings.js";
import { toProblem } from "./problems.js";
import { validationErrors } from "./validation.js";

/**
 * The batch operations answer each item on its own (the contract says so), so one malformed
 * item must not fail the whole request at route validation. The route checks the batch's
 * envelope only (an object whose list holds 1 to its maximum of objects); each item is then
 * checked against the body schema of its single-item operation's route, by the same strict body
 * validator, so that its failures read as that operation's would; they become that item's own
 * problem, with pointers relative to the item.
 */
const BATCHES = {
  messages: { path: "/v1/messages/batch", list: "messages", itemOperation: "createMessage" },
  suppressions: { path: "/v1/suppressions/batch", list: "suppressions", itemOperation: "createSuppression" },
} as const;

type Batch = keyof typeof BATCHES;

/** Checks one item of a batch; returns its ValidationError, or null when its shape is right. */
export type BatchItemValidator = (item: unknown) => ValidationError | null;
export type BatchItemValidators = Record<Batch, BatchItemValidator>;

type Compile = (route: { schema: object; httpPart: string }) => ((data: unknown) => boolean) & { errors?: unknown };

/** Loosens each batch's items in the copy of the contract the routes are built from. */
export function relaxBatchItems(spec: OpenApiDocument): void {
  for (const { path, list } of Object.values(BATCHES)) {
    const operation = spec.paths[path]?.post as { requestBody?: { content?: Record<string, { schema?: unknown }> } } | undefined;
    const media = operation?.requestBody?.content?.["application/json"];
    if (!media) throw new Error(`the contract has no JSON body for POST ${path}`);
    const envelope = media.schema as { $ref?: string };
    const name = envelope.$ref?.split("/").pop();
    const declared = name ? (spec.components?.schemas as Record<string, { properties?: Record<string, object> }> | undefined)?.[name] : undefined;
    const items = declared?.properties?.[list];
    if (!declared?.properties || !items) throw new Error(`${path}: the body schema has no ${list} list`);
    media.schema = { ...declared, properties: { ...declared.properties, [list]: { ...items, items: { type: "object" } } } };
  }
}

/**
 * A validator of one item per batch operation. `bodySchemaOf` gives an operation's body schema as
 * its route has it (the glue's, with every $ref resolved in place, which is what lets a union's
 * errors be told apart by form); the routes exist by the first batch, so it is asked then.
 */
export function batchItemValidators(bodySchemaOf: (operationId: string) => object, compile: Compile): BatchItemValidators {
  const validator = (operationId: string): BatchItemValidator => {
    let validate: ReturnType<Compile> | undefined;
    return (item) => {
      validate ??= compile({ schema: bodySchemaOf(operationId), httpPart: "body" });
      return validate(item) ? null : new ValidationError(validationErrors((validate.errors ?? []) as FastifySchemaValidationError[], "body"));
    };
  };
  return { messages: validator(BATCHES.messages.itemOperation), suppressions: validator(BATCHES.suppressions.itemOperation) };
}

/**
 * One item's place in a batch answer: refused, its problem (shaped by the one error handler's
 * rules) and that problem's status; else `success`, the status the single-item operation answers.
 * An error that is not a DomainError (an item that failed to store) is logged as the error
 * handler logs one, and answered as its 5xx without internals.
 */
export function itemAnswer<Status extends number>(req: FastifyRequest, error: unknown, success: Status) {
  if (error === null || error === undefined) return { status: success, error: null };
  const { problem } = toProblem(error, req);
  if (problem.status >= 500) req.log.error({ err: error }, "a batch item failed");
  return { status: problem.status as Status, error: problem };
}
