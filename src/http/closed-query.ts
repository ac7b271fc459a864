/**
 * Query strings are closed, as request bodies are: a parameter the operation does not declare is
 * a 422 at its name, not ignored. Ignored, a filter that does not exist looks like one that
 * matched everything (`GET /v1/events?message_id=…` answered every event of the environment).
 * The contract cannot say "no other parameters" of a query, so the route's schema, built by the
 * glue from the declared parameters, is closed here; the operation's name rides along in an
 * annotation so the error can say which parameters it does take.
 */
const OPERATION_ANNOTATION = "x-mailroom-operation";

interface ClosedQuerySchema {
  type: "object";
  properties: Record<string, unknown>;
  additionalProperties: false;
  [OPERATION_ANNOTATION]: string;
}

/** The route's query schema as the glue built it from the declared parameters (none: no schema), closed. */
export function closedQuerySchema(schema: unknown, operationId: string): ClosedQuerySchema {
  return { type: "object", properties: {}, ...(schema as object | undefined), additionalProperties: false, [OPERATION_ANNOTATION]: operationId };
}

export function isClosedQuery(schema: unknown): schema is ClosedQuerySchema {
  return typeof schema === "object" && schema !== null && OPERATION_ANNOTATION in schema;
}

/** What a closed query's error says about an undeclared parameter: the operation and its parameters. */
export function unknownParameterMessage(querySchema: ClosedQuerySchema): string {
  const operationId = querySchema[OPERATION_ANNOTATION];
  const names = Object.keys(querySchema.properties);
  return `is not a parameter of ${operationId}, which takes ${names.length === 0 ? "none" : names.join(", ")}`;
}
