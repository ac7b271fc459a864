import type { APIPromise } from "../api-promise.js";
import type { Mailroom, RequestOptions } from "../client.js";
import { MailroomConfigurationError } from "../errors.js";
import type { PagePromise } from "../pagination.js";
import type { DeletedObject, QueryParams, RequestBody, Webhook, WebhookAttempt, WebhookDelivery, WebhookEvent, WebhookReplay, WebhookSecret } from "../types.js";
import { signWebhook, verifyWebhook, type SignOptions, type VerifyOptions, type WebhookHeaders } from "../webhooks.js";

/**
 * Webhook endpoints (tag `Webhooks`): the URLs that receive this environment's events as signed
 * POSTs, their secrets, and their delivery attempts; and, on the receiving side, `verify` and
 * `sign` (Standard Webhooks).
 *
 * Unlike the other resources this one can be made without a client (`new Webhooks()`), because a
 * receiver verifies deliveries with a secret alone and needs no API key; only the API methods
 * need the client.
 */
export class Webhooks {
  constructor(private readonly mailroom?: Mailroom) {}

  /** `createWebhook`: a new endpoint; the answer's `secret` verifies its deliveries (`getSecret` shows it again). */
  create(params: RequestBody<"createWebhook">, options?: RequestOptions): APIPromise<Webhook> {
    const client = this.client();
    return client.unwrap(client.http.POST("/v1/webhooks", { body: params, ...client.init(options, "POST") }));
  }

  /** `listWebhooks`: the environment's endpoints, newest first, without secrets. */
  list(query: QueryParams<"listWebhooks"> = {}, options?: RequestOptions): PagePromise<Webhook> {
    const client = this.client();
    return client.paginate(query, (query) => client.http.GET("/v1/webhooks", { params: { query }, ...client.init(options) }));
  }

  /** `getWebhook`: the endpoint, its status and, when Mailroom disabled it, why. */
  get(webhookId: string, options?: RequestOptions): APIPromise<Webhook> {
    const client = this.client();
    return client.unwrap(client.http.GET("/v1/webhooks/{webhook_id}", { params: { path: { webhook_id: webhookId } }, ...client.init(options) }));
  }

  /** `updateWebhook`: change the fields given; `enabled: true` also re-enables an endpoint Mailroom disabled. */
  update(webhookId: string, params: RequestBody<"updateWebhook">, options?: RequestOptions): APIPromise<Webhook> {
    const client = this.client();
    return client.unwrap(
      client.http.PATCH("/v1/webhooks/{webhook_id}", { params: { path: { webhook_id: webhookId } }, body: params, ...client.init(options, "PATCH") }),
    );
  }

  /** `deleteWebhook`: the endpoint, its pending deliveries and its recorded attempts. */
  delete(webhookId: string, options?: RequestOptions): APIPromise<DeletedObject> {
    const client = this.client();
    return client.unwrapDeleted(
      client.http.DELETE("/v1/webhooks/{webhook_id}", { params: { path: { webhook_id: webhookId } }, ...client.initRepeatedDelete(options) }),
      { id: webhookId, object: "webhook", deleted: true },
    );
  }

  /** `getWebhookSecret`: the current signing secret, and the previous one while a rotation's overlap lasts. */
  getSecret(webhookId: string, options?: RequestOptions): APIPromise<WebhookSecret> {
    const client = this.client();
    return client.unwrap(client.http.GET("/v1/webhooks/{webhook_id}/secret", { params: { path: { webhook_id: webhookId } }, ...client.init(options) }));
  }

  /** `rotateWebhookSecret`: a new secret; deliveries carry both signatures for `overlap_seconds` (default 24 h). */
  rotateSecret(webhookId: string, params: RequestBody<"rotateWebhookSecret"> = {}, options?: RequestOptions): APIPromise<Webhook> {
    const client = this.client();
    return client.unwrap(
      client.http.POST("/v1/webhooks/{webhook_id}/rotate-secret", { params: { path: { webhook_id: webhookId } }, body: params, ...client.init(options, "POST") }),
    );
  }

  /** `testWebhook`: queue a sample event of `type` (its `data.test` is true) for the endpoint. */
  test(webhookId: string, params: RequestBody<"testWebhook">, options?: RequestOptions): APIPromise<WebhookDelivery> {
    const client = this.client();
    return client.unwrap(
      client.http.POST("/v1/webhooks/{webhook_id}/test", { params: { path: { webhook_id: webhookId } }, body: params, ...client.init(options, "POST") }),
    );
  }

  /** `redeliverWebhookEvent`: queue one event for the endpoint again, with the same `webhook-id`. */
  redeliverEvent(webhookId: string, params: RequestBody<"redeliverWebhookEvent">, options?: RequestOptions): APIPromise<WebhookDelivery> {
    const client = this.client();
    return client.unwrap(
      client.http.POST("/v1/webhooks/{webhook_id}/redeliver", { params: { path: { webhook_id: webhookId } }, body: params, ...client.init(options, "POST") }),
    );
  }

  /** `replayWebhookEvents`: queue again every failed delivery of an event created at or after `since`. */
  replayEvents(webhookId: string, params: RequestBody<"replayWebhookEvents">, options?: RequestOptions): APIPromise<WebhookReplay> {
    const client = this.client();
    return client.unwrap(
      client.http.POST("/v1/webhooks/{webhook_id}/replay", { params: { path: { webhook_id: webhookId } }, body: params, ...client.init(options, "POST") }),
    );
  }

  /** `listWebhookAttempts`: every HTTP attempt made to the endpoint, newest first; filter by `event_id` or `status`. */
  listAttempts(webhookId: string, query: QueryParams<"listWebhookAttempts"> = {}, options?: RequestOptions): PagePromise<WebhookAttempt> {
    const client = this.client();
    return client.paginate(query, (query) =>
      client.http.GET("/v1/webhooks/{webhook_id}/attempts", { params: { path: { webhook_id: webhookId }, query }, ...client.init(options) }),
    );
  }

  /**
   * Checks a delivery's signature and returns its parsed payload: one of the contract's webhook
   * events, a message's or a domain's, told apart by `type`. Pass the body exactly as received
   * (before any JSON parsing) and the request's headers.
   *
   * ```ts
   * const event = await mr.webhooks.verify(rawBody, req.headers, process.env.MAILROOM_WEBHOOK_SECRET);
   * if (event.type === "message.bounced") …
   * if (event.type === "domain.temporary_failure") … // event.domain, event.data.missing_records
   * ```
   */
  verify<Payload = WebhookEvent>(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): Promise<Payload> {
    return verifyWebhook<Payload>(rawBody, headers, secret, options);
  }

  /**
   * The headers Mailroom would send with `payload`, the body as a string (`JSON.stringify(event)`)
   * or bytes: for testing a receiver without a server.
   */
  sign(payload: string | Uint8Array, secret: string, options: SignOptions): Promise<Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string>> {
    return signWebhook(payload, secret, options);
  }

  private client(): Mailroom {
    if (!this.mailroom) {
      throw new MailroomConfigurationError("This Webhooks object only verifies and signs: call the API through a client's webhooks (new Mailroom(apiKey).webhooks).");
    }
    return this.mailroom;
  }
}
