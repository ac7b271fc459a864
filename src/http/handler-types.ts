import type { FastifyReply, FastifyRequest } from "fastify";
import type { operations, webhooks } from "../../generated/v1.js";

/** The operations of the contract's `webhooks:` section: Mailroom sends them, it serves none. */
type WebhookOperation = webhooks[keyof webhooks]["post"];

/** Handler types derived from the contract: a contract change the code ignores fails to compile. */
export type OperationId = { [O in keyof operations]: operations[O] extends WebhookOperation ? never : O }[keyof operations];

type JsonContent<T> = T extends { content: { "application/json": infer B } } ? B : never;
type Body<O extends OperationId> = operations[O] extends { requestBody?: infer R }
  ? undefined extends R
    ? JsonContent<NonNullable<R>> | undefined
    : JsonContent<R>
  : undefined;
type Params<O extends OperationId> = operations[O]["parameters"] extends { path: infer P } ? (P extends Record<string, unknown> ? P : Record<string, never>) : Record<string, never>;
type Query<O extends OperationId> = operations[O]["parameters"] extends { query?: infer Q } ? NonNullable<Q> : Record<string, never>;

type SuccessStatus = 200 | 201 | 202;
type Success<O extends OperationId> = {
  [S in SuccessStatus]: operations[O]["responses"] extends Record<S, infer R> ? JsonContent<R> : never;
}[SuccessStatus];

export type OperationRequest<O extends OperationId> = FastifyRequest<{ Body: Body<O>; Params: Params<O>; Querystring: Query<O> }>;

export type Handler<O extends OperationId> = (req: OperationRequest<O>, reply: FastifyReply) => Promise<Success<O> | FastifyReply>;

export type HandlerMap = { [O in OperationId]: Handler<O> };
