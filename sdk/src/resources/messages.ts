import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { PagePromise } from "../pagination.js";
import type { CreateMessageBatchParams, CreateMessageParams, Event, InboundMessage, Message, MessageBatch, MessagePreview, MessageSummary, PreviewMessageParams, QueryParams, RequestBody } from "../types.js";
import { Resource } from "./resource.js";

/** Send email and follow what happened to it, per recipient (tag `Messages`). */
export class Messages extends Resource {
  /** `createMessage`: accept a message for delivery (202; durable once this resolves). */
  create(params: CreateMessageParams, options?: RequestOptions): APIPromise<Message> {
    return this.client.unwrap(this.client.http.POST("/v1/messages", { body: params, ...this.client.init(options, "POST") }));
  }

  /**
   * `createMessageBatch`: accept up to 100 messages in one call. Resolves whatever becomes of each
   * message: `data[i]` is `messages[i]`'s answer, 202 with the message or 422/429 with its
   * problem, so check every item's `status`; only a malformed batch as a whole throws. One
   * Idempotency-Key covers the batch, so a retry never sends any of its messages twice.
   */
  createBatch(params: CreateMessageBatchParams, options?: RequestOptions): APIPromise<MessageBatch> {
    return this.client.unwrap(this.client.http.POST("/v1/messages/batch", { body: params, ...this.client.init(options, "POST") }));
  }

  /**
   * `previewMessage`: a dry run of `create` with the same params. Throws what `create` would
   * throw; otherwise resolves what it would send (rendered content and source, tracking, and
   * per recipient its suppression or, in sandbox, its simulated outcome). Stores, sends and
   * counts nothing.
   */
  preview(params: PreviewMessageParams, options?: RequestOptions): APIPromise<MessagePreview> {
    return this.client.unwrap(this.client.http.POST("/v1/messages/preview", { body: params, ...this.client.init(options, "POST") }));
  }

  /** `listMessages`: newest first; await for one page or `for await` over every message. */
  list(query: QueryParams<"listMessages"> = {}, options?: RequestOptions): PagePromise<MessageSummary> {
    return this.client.paginate(query, (query) =>
      this.client.http.GET("/v1/messages", { params: { query }, ...this.client.init(options) }),
    );
  }

  /** `getMessage`: the message with its recipients, their status and the rendered content. */
  get(messageId: string, options?: RequestOptions): APIPromise<Message> {
    return this.client.unwrap(this.client.http.GET("/v1/messages/{message_id}", { params: { path: { message_id: messageId } }, ...this.client.init(options) }));
  }

  /** `cancelMessage`: cancel a scheduled message that has not been sent yet. */
  cancel(messageId: string, options?: RequestOptions): APIPromise<Message> {
    return this.client.unwrap(
      this.client.http.POST("/v1/messages/{message_id}/cancel", { params: { path: { message_id: messageId } }, ...this.client.init(options, "POST") }),
    );
  }

  /**
   * `rescheduleMessage`: move a scheduled message to `scheduled_at`, or send it now with `null`
   * (or a time at most a minute past). A message no longer `scheduled` throws ConflictError
   * `message_not_scheduled`; a time more than 30 days ahead or past its `expires_at` throws
   * UnprocessableEntityError.
   */
  reschedule(messageId: string, params: RequestBody<"rescheduleMessage">, options?: RequestOptions): APIPromise<Message> {
    return this.client.unwrap(
      this.client.http.POST("/v1/messages/{message_id}/reschedule", {
        params: { path: { message_id: messageId } },
        body: params,
        ...this.client.init(options, "POST"),
      }),
    );
  }

  /** `listMessageEvents`: the message's events, in order. */
  listEvents(messageId: string, query: QueryParams<"listMessageEvents"> = {}, options?: RequestOptions): PagePromise<Event> {
    return this.client.paginate(query, (query) =>
      this.client.http.GET("/v1/messages/{message_id}/events", {
        params: { path: { message_id: messageId }, query },
        ...this.client.init(options),
      }),
    );
  }

  /**
   * `listMessageReplies`: the replies threaded to the message, oldest first; await for one page
   * or `for await` over every reply.
   */
  listReplies(messageId: string, query: QueryParams<"listMessageReplies"> = {}, options?: RequestOptions): PagePromise<InboundMessage> {
    return this.client.paginate(query, (query) =>
      this.client.http.GET("/v1/messages/{message_id}/replies", {
        params: { path: { message_id: messageId }, query },
        ...this.client.init(options),
      }),
    );
  }
}
