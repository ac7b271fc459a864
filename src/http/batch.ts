import type { FastifySchemaValidationError } from "fastify/types/schema.js";
import { ValidationError } from "../domain/errors.js";
import type { OpenApiDocument } from "./bindings.js";
import { validationErrors } from "./validation.js";

/**
 * createMessageBatch answers each message on its own (the contract says so), so one malformed
 * message must not fail the whole request at route validation. The route checks the batch's
 * envelope only (an object whose `messages` is a list of 1-100 objects); each message is then
 * checked against CreateMessageRequest by the same strict body validator, and its failures
 * become that message's own problem, with pointers relative to the message.
 */
const BATCH = { path: "/v1/messages/batch", method: "post", itemSchema: "#/components/schemas/CreateMessageRequest" } as const;

type Compile = (route: { schema: object; httpPart: string }) => ((data: unknown) => boolean) & { errors?: unknown };

/** Loosens the batch's items in the copy of the contract the routes are built from. */
export function relaxBatchItems(spec: OpenApiDocument): void {
  const operation = spec.paths[BATCH.path]?.[BATCH.method] as { requestBody?: { content?: Record<string, { schema?: unknown }> } } | undefined;
  const media = operation?.requestBody?.content?.["application/json"];
  if (!media) throw new Error(`the contract has no JSON body for ${BATCH.method.toUpperCase()} ${BATCH.path}`);
  const envelope = media.schema as { $ref?: string };
  const name = envelope.$ref?.split("/").pop();
  const declared = name ? (spec.components?.schemas as Record<string, { properties?: { messages?: object } }> | undefined)?.[name] : undefined;
  if (!declared?.properties?.messages) throw new Error(`${BATCH.path}: the body schema has no messages list`);
  media.schema = {
    ...declared,
    properties: { ...declared.properties, messages: { ...declared.properties.messages, items: { type: "object" } } },
  };
}

/** Validates one message of a batch; returns its ValidationError, or null when its shape is right. */
export function batchItemValidator(spec: OpenApiDocument, compile: Compile): (item: unknown) => ValidationError | null {
  const validate = compile({ schema: { $ref: BATCH.itemSchema, components: spec.components }, httpPart: "body" });
  return (item) => {
    if (validate(item)) return null;
    return new ValidationError(validationErrors((validate.errors ?? []) as FastifySchemaValidationError[], "body"));
  };
}
