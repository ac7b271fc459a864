import { describe, expectTypeOf, it } from "vitest";
import {
  Mailroom,
  type ApiKey,
  type ApiKeyWithSecret,
  type APIError,
  type CreateMessageParams,
  type DeletedObject,
  type Domain,
  type DomainEvent,
  type DomainEventType,
  type DomainRecord,
  type DomainStatus,
  type Event,
  type EventType,
  type InboundAttachment,
  type InboundMessage,
  type OperationId,
  type FieldError,
  type Invitation,
  type InvitationWithUrl,
  type Member,
  type Message,
  type MessageBatch,
  type MessageStatus,
  type MessageSummary,
  type Page,
  type PagePromise,
  type RequestBody,
  type RescheduleMessageParams,
  type ResponseBody,
  type Role,
  type RenderedTemplate,
  type CreateSuppressionBatchParams,
  type Suppression,
  type SuppressionBatch,
  type SuppressionBatchItem,
  type SuppressionReason,
  type Template,
  type TemplateVersion,
  type Usage,
  type Metrics,
  type RequestLog,
  type MetricCounts,
  type MetricBucket,
  type GetMetricsParams,
  type Webhook,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookPayload,
  type WebhookReplay,
  type WebhookSecret,
  type Workspace,
  type WithMessageContent,
  type components,
} from "../src/index.js";

/*
 * Type-level tests: `npx tsc --noEmit` checks them (each @ts-expect-error must be needed, or tsc
 * fails); vitest runs them as no-ops. They pin that the SDK's types come from the contract, so a
 * misspelled field or a wrong value is caught by the compiler before a request is made.
 */
const mr = new Mailroom({ apiKey: "svc_test_types", fetch: () => Promise.reject(new Error("types only: never called")) });

/**
 * Type-checks calls without making them: the closure is never run. Used where a call itself must
 * be checked, since expectTypeOf().toBeCallableWith() infers its argument and so would let an
 * extra (misspelled) property through.
 */
const compileOnly = (_calls: () => unknown) => undefined;

type WorkspaceObject = components["schemas"]["Workspace"];

describe("messages.create", () => {
  it("accepts the smallest message and every documented field", () => {
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", subject: "Hi", html: "<p>Hi</p>" });
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: ["ada@example.com", "Grace <grace@example.com>"], cc: "ops@acme.example", subject: "Receipt", text: "Thanks", tags: ["receipt"], metadata: { order_id: "1234" } });
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", subject: "Hi", text: "Hi" }, { idempotencyKey: "order-1234" });
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", subject: "Hi", html: "<p>Hi</p>", text: "Hi" });
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", template: { slug: "welcome", variables: { first_name: "Ada" } } });
  });

  it("requires content: a subject with html and/or text, or a template instead of all three", () => {
    // @ts-expect-error a message needs content
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com" });
    // @ts-expect-error a body needs a subject
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", html: "<p>Hi</p>" });
    // @ts-expect-error a subject needs a body, html or text
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", subject: "Hi" });
    // @ts-expect-error the template gives the subject and body: they cannot be given beside it
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", subject: "Hi", template: { slug: "welcome" } });
    // @ts-expect-error the same rule holds for a preview
    expectTypeOf(mr.messages.preview).toBeCallableWith({ to: "ada@example.com", subject: "Hi" });
    // @ts-expect-error and for each message of a batch
    expectTypeOf(mr.messages.createBatch).toBeCallableWith({ messages: [{ to: "ada@example.com", text: "Hi" }] });
  });

  it("requires to", () => {
    // @ts-expect-error `to` is the one field every message needs
    expectTypeOf(mr.messages.create).toBeCallableWith({ subject: "Hi", html: "<p>Hi</p>" });
  });

  it("refuses a misspelled field", () => {
    compileOnly(() =>
      // @ts-expect-error `subjet` is not a field: the contract has additionalProperties: false
      mr.messages.create({ to: "ada@example.com", subjet: "Hi", html: "<p>Hi</p>" }),
    );
  });

  it("refuses a value of the wrong type", () => {
    // @ts-expect-error `to` is an address or a list of them, not a number
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: 42, subject: "Hi", html: "<p>Hi</p>" });
    // @ts-expect-error metadata values are strings
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", subject: "Hi", text: "Hi", metadata: { count: 1 } });
  });

  it("takes a timeout and retries of its own", () => {
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", subject: "Hi", text: "Hi" }, { timeout: 5_000, maxRetries: 1 });
    // @ts-expect-error the timeout is in milliseconds, a number
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", subject: "Hi", text: "Hi" }, { timeout: "5s" });
  });

  it("refuses an unknown request option", () => {
    compileOnly(() =>
      // @ts-expect-error the option is `idempotencyKey`
      mr.messages.create({ to: "ada@example.com", subject: "Hi", text: "Hi" }, { idempotency_key: "k" }),
    );
  });

  it("resolves to a Message with a string id and a status of the MessageStatus union", () => {
    expectTypeOf(mr.messages.create).returns.resolves.toEqualTypeOf<Message>();
    expectTypeOf<Message["id"]>().toEqualTypeOf<string>();
    expectTypeOf<Message["status"]>().toEqualTypeOf<MessageStatus>();
    expectTypeOf<MessageStatus>().toEqualTypeOf<"scheduled" | "queued" | "sending" | "delivered" | "deferred" | "bounced" | "failed" | "suppressed" | "canceled">();
  });

  it("takes CreateMessageParams, createMessage's body with its content rule", () => {
    expectTypeOf(mr.messages.create).parameter(0).toEqualTypeOf<CreateMessageParams>();
    expectTypeOf<CreateMessageParams>().toEqualTypeOf<WithMessageContent<RequestBody<"createMessage">>>();
    expectTypeOf<CreateMessageParams>().toExtend<RequestBody<"createMessage">>();
  });
});

describe("messages.list", () => {
  it("filters by status only with a MessageStatus", () => {
    expectTypeOf(mr.messages.list).toBeCallableWith({ status: "delivered", limit: 50 });
    // @ts-expect-error "sent" is not a message status
    expectTypeOf(mr.messages.list).toBeCallableWith({ status: "sent" });
  });

  it("takes limit as a number", () => {
    // @ts-expect-error limit is a number, not a string
    expectTypeOf(mr.messages.list).toBeCallableWith({ limit: "50" });
  });

  it("returns a PagePromise of message summaries: a Page when awaited", () => {
    expectTypeOf(mr.messages.list).returns.toEqualTypeOf<PagePromise<MessageSummary>>();
    expectTypeOf<Awaited<ReturnType<typeof mr.messages.list>>>().toEqualTypeOf<Page<MessageSummary>>();
    expectTypeOf<Page<MessageSummary>["data"]>().toEqualTypeOf<MessageSummary[]>();
  });
});

describe("messages.reschedule", () => {
  it("takes a time or null, and the key is required", () => {
    expectTypeOf(mr.messages.reschedule).toBeCallableWith("msg_1", { scheduled_at: "2026-11-23T09:00:00Z" });
    expectTypeOf(mr.messages.reschedule).toBeCallableWith("msg_1", { scheduled_at: null }, { idempotencyKey: "move-1" });
    // @ts-expect-error scheduled_at is required: null, not its absence, means now
    expectTypeOf(mr.messages.reschedule).toBeCallableWith("msg_1", {});
    // @ts-expect-error scheduled_at is an RFC 3339 string, not a Date
    expectTypeOf(mr.messages.reschedule).toBeCallableWith("msg_1", { scheduled_at: new Date() });
  });

  it("refuses a misspelled field", () => {
    compileOnly(() =>
      // @ts-expect-error `send_at` is not a field: the contract has additionalProperties: false
      mr.messages.reschedule("msg_1", { scheduled_at: null, send_at: "2026-11-23T09:00:00Z" }),
    );
  });

  it("takes RescheduleMessageParams, which is RequestBody<'rescheduleMessage'>, and resolves to a Message", () => {
    expectTypeOf(mr.messages.reschedule).parameter(1).toEqualTypeOf<RescheduleMessageParams>();
    expectTypeOf<RescheduleMessageParams>().toEqualTypeOf<RequestBody<"rescheduleMessage">>();
    expectTypeOf(mr.messages.reschedule).returns.resolves.toEqualTypeOf<Message>();
  });
});

describe("events", () => {
  it("filters by type only with an EventType", () => {
    expectTypeOf(mr.events.list).toBeCallableWith({ type: "message.bounced" });
    // @ts-expect-error events are namespaced: "bounced" is "message.bounced"
    expectTypeOf(mr.events.list).toBeCallableWith({ type: "bounced" });
  });

  it("lists Events, whose statuses are MessageStatus or null", () => {
    expectTypeOf(mr.messages.listEvents).returns.toEqualTypeOf<PagePromise<Event>>();
    expectTypeOf<Event["to_status"]>().toEqualTypeOf<MessageStatus | null>();
  });
});

describe("apiKeys", () => {
  it("creates keys only with full_access or sending_access", () => {
    expectTypeOf(mr.apiKeys.create).toBeCallableWith({ name: "CI", permission: "sending_access" });
    expectTypeOf(mr.apiKeys.create).toBeCallableWith({ name: "Admin", permission: "full_access" });
    // @ts-expect-error there is no admin permission
    expectTypeOf(mr.apiKeys.create).toBeCallableWith({ name: "Root", permission: "admin" });
  });

  it("returns the secret only from create and rotate", () => {
    expectTypeOf(mr.apiKeys.create).returns.resolves.toEqualTypeOf<ApiKeyWithSecret>();
    expectTypeOf(mr.apiKeys.rotate).returns.resolves.toEqualTypeOf<ApiKeyWithSecret>();
    expectTypeOf(mr.apiKeys.get).returns.resolves.toEqualTypeOf<ApiKey>();
    expectTypeOf<ApiKeyWithSecret["secret"]>().toEqualTypeOf<string>();
    expectTypeOf<ApiKey>().not.toHaveProperty("secret");
  });

  it("rotates with an optional overlap in seconds", () => {
    expectTypeOf(mr.apiKeys.rotate).toBeCallableWith("key_1");
    expectTypeOf(mr.apiKeys.rotate).toBeCallableWith("key_1", { overlap_seconds: 0 });
    compileOnly(() =>
      // @ts-expect-error the overlap is `overlap_seconds`
      mr.apiKeys.rotate("key_1", { overlap: 0 }),
    );
  });
});

describe("workspace", () => {
  it("updates with the contract's fields and returns the Workspace", () => {
    expectTypeOf(mr.workspace.update).toBeCallableWith({ default_from: null });
    expectTypeOf(mr.workspace.update).toBeCallableWith({ monthly_quota: 50_000 });
    expectTypeOf(mr.workspace.update).toBeCallableWith({ monthly_quota: null });
    expectTypeOf(mr.workspace.update).returns.resolves.toEqualTypeOf<WorkspaceObject>();
    expectTypeOf<ResponseBody<"getWorkspace">>().toEqualTypeOf<WorkspaceObject>();
    expectTypeOf<Workspace>().toEqualTypeOf<WorkspaceObject>();
  });
});

describe("tracking and replies", () => {
  it("sends tracking options as booleans, and reads what the message tracks and what came of it", () => {
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", subject: "Hi", text: "Hi", track_opens: true, track_clicks: false, track_replies: true, unsubscribe: true });
    // @ts-expect-error track_opens is a boolean
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", subject: "Hi", text: "Hi", track_opens: "yes" });
    expectTypeOf<Message["tracking"]>().toEqualTypeOf<{ opens: boolean; clicks: boolean; replies: boolean; unsubscribe: boolean }>();
    expectTypeOf<MessageSummary["engagement"]>().toEqualTypeOf<{ opens: number; clicks: number; replies: number }>();
    expectTypeOf<Message["recipients"][number]["opened_at"]>().toEqualTypeOf<string | null>();
  });

  it("updates the workspace's tracking defaults, any of them", () => {
    expectTypeOf(mr.workspace.update).toBeCallableWith({ tracking: { opens: true } });
    expectTypeOf(mr.workspace.update).toBeCallableWith({ tracking: { clicks: false, replies: true, unsubscribe: true } });
    compileOnly(() =>
      // @ts-expect-error the defaults are opens, clicks, replies and unsubscribe
      mr.workspace.update({ tracking: { open: true } }),
    );
    expectTypeOf<Workspace["tracking"]["unsubscribe"]>().toEqualTypeOf<boolean>();
  });

  it("lists replies as pages of InboundMessage, and downloads attachments as bytes", () => {
    expectTypeOf(mr.messages.listReplies).returns.toEqualTypeOf<PagePromise<InboundMessage>>();
    expectTypeOf(mr.inbound.get).returns.resolves.toEqualTypeOf<InboundMessage>();
    expectTypeOf(mr.inbound.getAttachment).toBeCallableWith("inb_1", 0);
    // @ts-expect-error the attachment is named by its index, a number
    expectTypeOf(mr.inbound.getAttachment).toBeCallableWith("inb_1", "screenshot.png");
    expectTypeOf(mr.inbound.getAttachment).returns.resolves.toEqualTypeOf<Uint8Array>();
    expectTypeOf<InboundMessage["attachments"]>().toEqualTypeOf<InboundAttachment[]>();
    expectTypeOf<InboundMessage["authentication"]["dmarc"]>().toEqualTypeOf<"pass" | "fail" | "softfail" | "neutral" | "none" | "temperror" | "permerror">();
  });
});

describe("OperationId", () => {
  it("names the operations a client calls, and not the webhook payloads the contract describes", () => {
    expectTypeOf<"getInboundMessage">().toExtend<OperationId>();
    expectTypeOf<"updateDomain">().toExtend<OperationId>();
    expectTypeOf<"messageQueuedWebhook">().not.toExtend<OperationId>();
    expectTypeOf<"messageRepliedWebhook">().not.toExtend<OperationId>();
  });
});

describe("messages.createBatch", () => {
  it("takes createMessage's bodies under messages, expires_at included, and resolves to a MessageBatch", () => {
    expectTypeOf(mr.messages.createBatch).toBeCallableWith({ messages: [{ to: "ada@example.com", subject: "Hi", text: "Hi", expires_at: "2026-12-01T09:00:00Z" }] });
    expectTypeOf(mr.messages.createBatch).returns.resolves.toEqualTypeOf<MessageBatch>();
    expectTypeOf<MessageBatch["data"][number]["status"]>().toEqualTypeOf<202 | 403 | 422 | 429 | 500 | 503>();
    expectTypeOf<MessageBatch["data"][number]["message"]>().toEqualTypeOf<Message | null>();
  });

  it("refuses a bare array: the messages go under `messages`", () => {
    // @ts-expect-error the body is { messages: [...] }
    expectTypeOf(mr.messages.createBatch).toBeCallableWith([{ to: "ada@example.com", subject: "Hi", text: "Hi" }]);
  });
});

describe("domains", () => {
  it("creates a domain from its name and resolves to a Domain whose records say what to publish", () => {
    expectTypeOf(mr.domains.create).toBeCallableWith({ name: "acme.example" });
    // @ts-expect-error `name` is required
    expectTypeOf(mr.domains.create).toBeCallableWith({ return_path_subdomain: "bounces" });
    expectTypeOf(mr.domains.verify).returns.resolves.toEqualTypeOf<Domain>();
    expectTypeOf<DomainRecord["type"]>().toEqualTypeOf<"TXT" | "MX" | "CNAME">();
    expectTypeOf<DomainRecord["purpose"]>().toEqualTypeOf<"spf" | "dkim" | "dkim_next" | "dmarc" | "return_path" | "tracking">();
    expectTypeOf<DomainRecord["status"]>().toEqualTypeOf<"pending" | "verified" | "missing" | "mismatch">();
  });

  it("updates tracking defaults with a boolean or null (the workspace's), and the tracking domain", () => {
    expectTypeOf(mr.domains.update).toBeCallableWith("dom_1", { track_opens: true, track_clicks: null });
    expectTypeOf(mr.domains.update).toBeCallableWith("dom_1", { tracking_domain: "track.acme.example" });
    expectTypeOf(mr.domains.update).toBeCallableWith("dom_1", { tracking_domain: null });
    // @ts-expect-error a tracking default is a boolean or null, not "on"
    expectTypeOf(mr.domains.update).toBeCallableWith("dom_1", { track_opens: "on" });
    compileOnly(() =>
      // @ts-expect-error the name of a domain cannot be changed
      mr.domains.update("dom_1", { name: "other.example" }),
    );
    expectTypeOf(mr.domains.update).returns.resolves.toEqualTypeOf<Domain>();
    expectTypeOf<Domain["track_clicks"]>().toEqualTypeOf<boolean | null>();
  });

  it("lists the domains of one DomainStatus, such as those that failed", () => {
    expectTypeOf(mr.domains.list).toBeCallableWith({ status: "failed" });
    expectTypeOf(mr.domains.list).toBeCallableWith({ status: "temporary_failure", limit: 100 });
    // @ts-expect-error "missing" is a record's status, not a domain's
    expectTypeOf(mr.domains.list).toBeCallableWith({ status: "missing" });
    expectTypeOf(mr.domains.list).returns.toEqualTypeOf<PagePromise<Domain>>();
  });

  it("deletes to a DeletedObject", () => {
    expectTypeOf(mr.domains.delete).returns.resolves.toEqualTypeOf<DeletedObject>();
    expectTypeOf(mr.suppressions.delete).returns.resolves.toEqualTypeOf<DeletedObject>();
  });
});

describe("suppressions", () => {
  it("lists by a SuppressionReason and returns Suppressions", () => {
    expectTypeOf(mr.suppressions.list).toBeCallableWith({ reason: "hard_bounce" });
    // @ts-expect-error "bounced" is not a reason
    expectTypeOf(mr.suppressions.list).toBeCallableWith({ reason: "bounced" });
    expectTypeOf(mr.suppressions.list).returns.toEqualTypeOf<PagePromise<Suppression>>();
    expectTypeOf<SuppressionReason>().toEqualTypeOf<"hard_bounce" | "complaint" | "unsubscribe" | "manual">();
  });

  it("creates only for the reasons a caller may give: hard bounces are Mailroom's to record", () => {
    expectTypeOf(mr.suppressions.create).toBeCallableWith({ email: "ada@example.com", reason: "unsubscribe" });
    // @ts-expect-error hard_bounce is recorded by Mailroom itself
    expectTypeOf(mr.suppressions.create).toBeCallableWith({ email: "ada@example.com", reason: "hard_bounce" });
  });

  it("creates many under suppressions, each what create takes, and resolves to a SuppressionBatch", () => {
    expectTypeOf(mr.suppressions.createBatch).toBeCallableWith({ suppressions: [{ email: "ada@example.com" }, { email: "grace@example.com", reason: "complaint", detail: "Imported" }] });
    expectTypeOf(mr.suppressions.createBatch).toBeCallableWith({ suppressions: [{ email: "ada@example.com" }] }, { idempotencyKey: "import#1" });
    // @ts-expect-error hard_bounce is recorded by Mailroom itself, in a batch too
    expectTypeOf(mr.suppressions.createBatch).toBeCallableWith({ suppressions: [{ email: "ada@example.com", reason: "hard_bounce" }] });
    // @ts-expect-error the body is { suppressions: [...] }
    expectTypeOf(mr.suppressions.createBatch).toBeCallableWith([{ email: "ada@example.com" }]);
    expectTypeOf(mr.suppressions.createBatch).parameter(0).toEqualTypeOf<CreateSuppressionBatchParams>();
    expectTypeOf<CreateSuppressionBatchParams>().toEqualTypeOf<RequestBody<"createSuppressionBatch">>();
    expectTypeOf(mr.suppressions.createBatch).returns.resolves.toEqualTypeOf<SuppressionBatch>();
    expectTypeOf<SuppressionBatch["data"]>().toEqualTypeOf<SuppressionBatchItem[]>();
    expectTypeOf<SuppressionBatchItem["status"]>().toEqualTypeOf<200 | 201 | 422>();
    expectTypeOf<SuppressionBatchItem["suppression"]>().toEqualTypeOf<Suppression | null>();
  });
});

describe("usage", () => {
  it("takes an optional from and to and resolves to Usage", () => {
    expectTypeOf(mr.usage.get).toBeCallableWith();
    expectTypeOf(mr.usage.get).toBeCallableWith({ from: "2026-11-01", to: "2026-11-30" });
    expectTypeOf(mr.usage.get).returns.resolves.toEqualTypeOf<Usage>();
    expectTypeOf<Usage["quota"]["remaining"]>().toEqualTypeOf<number | null>();
  });
});

describe("request logs", () => {
  it("lists with filters and gets by request id", () => {
    expectTypeOf(mr.requestLogs.list).toBeCallableWith({ status: "4xx", method: "POST", operation: "createMessage", credential_id: "key_x", created_after: "2026-11-21T00:00:00Z" });
    // @ts-expect-error methods are the contract's
    mr.requestLogs.list({ method: "TRACE" });
    expectTypeOf(mr.requestLogs.get).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(mr.requestLogs.get).returns.resolves.toEqualTypeOf<RequestLog>();
    expectTypeOf<RequestLog["credential"]["type"]>().toEqualTypeOf<"api_key" | "user">();
  });
});

describe("metrics", () => {
  it("takes an optional range, granularity and filters, and resolves to Metrics", () => {
    expectTypeOf(mr.metrics.get).toBeCallableWith();
    expectTypeOf(mr.metrics.get).toBeCallableWith({ from: "2026-11-15T00:00:00Z", granularity: "hour", tag: "welcome", template: "receipt" });
    // @ts-expect-error buckets are hours or days
    mr.metrics.get({ granularity: "week" });
    expectTypeOf(mr.metrics.get).parameter(0).toEqualTypeOf<GetMetricsParams | undefined>();
    expectTypeOf(mr.metrics.get).returns.resolves.toEqualTypeOf<Metrics>();
    expectTypeOf<Metrics["buckets"][number]>().toEqualTypeOf<MetricBucket>();
    expectTypeOf<MetricCounts["open_rate"]>().toEqualTypeOf<number | null>();
  });
});

describe("accounts", () => {
  it("takes roles only from the Role union", () => {
    expectTypeOf<Role>().toEqualTypeOf<"owner" | "admin" | "developer" | "viewer">();
    expectTypeOf(mr.accounts.updateMember).toBeCallableWith("usr_1", { role: "viewer" });
    // @ts-expect-error there is no superuser role
    expectTypeOf(mr.accounts.updateMember).toBeCallableWith("usr_1", { role: "superuser" });
    expectTypeOf(mr.accounts.createInvitation).toBeCallableWith({ email: "grace@acme.example" });
  });

  it("returns the accept_url only from createInvitation", () => {
    expectTypeOf(mr.accounts.createInvitation).returns.resolves.toEqualTypeOf<InvitationWithUrl>();
    expectTypeOf<InvitationWithUrl["accept_url"]>().toEqualTypeOf<string>();
    expectTypeOf(mr.accounts.revokeInvitation).returns.resolves.toEqualTypeOf<Invitation>();
    expectTypeOf<Invitation>().not.toHaveProperty("accept_url");
  });

  it("lists members and invitations as pages", () => {
    expectTypeOf(mr.accounts.listMembers).returns.toEqualTypeOf<PagePromise<Member>>();
    expectTypeOf(mr.accounts.listInvitations).returns.toEqualTypeOf<PagePromise<Invitation>>();
  });
});

describe("errors", () => {
  it("carry code: string and snake_case fields as on the wire", () => {
    expectTypeOf<APIError["code"]>().toEqualTypeOf<string>();
    expectTypeOf<APIError["status"]>().toEqualTypeOf<number>();
    expectTypeOf<APIError["request_id"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<APIError["errors"]>().toEqualTypeOf<FieldError[]>();
    expectTypeOf<FieldError["pointer"]>().toEqualTypeOf<string>();
  });
});

describe("webhooks.verify", () => {
  it("returns one of the contract's webhook payloads, each an Event or a DomainEvent, unless told the payload's type", () => {
    const verifyEvent = () => mr.webhooks.verify("{}", {}, "whsec_c2VjcmV0");
    const verifyCustom = () => mr.webhooks.verify<{ custom: true }>("{}", {}, "whsec_c2VjcmV0");
    expectTypeOf(verifyEvent).returns.resolves.toEqualTypeOf<WebhookEvent>();
    expectTypeOf<WebhookEvent>().toExtend<Event | DomainEvent>();
    expectTypeOf<WebhookEvent>().not.toExtend<Event>();
    expectTypeOf(verifyCustom).returns.resolves.toEqualTypeOf<{ custom: true }>();
  });

  it("tells the payloads apart by type, a message's or a domain's", () => {
    expectTypeOf<WebhookEvent["type"]>().toEqualTypeOf<WebhookEventType>();
    expectTypeOf<WebhookEventType>().toEqualTypeOf<EventType | DomainEventType>();
    expectTypeOf<DomainEventType>().toEqualTypeOf<"domain.verified" | "domain.temporary_failure" | "domain.failed" | "domain.dkim_rotated">();
    expectTypeOf<WebhookPayload<"message.bounced">["type"]>().toEqualTypeOf<"message.bounced">();
    expectTypeOf<Extract<WebhookEvent, { type: "message.delivered" }>>().toEqualTypeOf<WebhookPayload<"message.delivered">>();
    expectTypeOf<Extract<WebhookEvent, { type: "domain.failed" }>>().toEqualTypeOf<WebhookPayload<"domain.failed">>();
    // The rotation's payload promises its selectors.
    expectTypeOf<WebhookPayload<"domain.dkim_rotated">["data"]["selectors"]>().toEqualTypeOf<string[]>();
    // @ts-expect-error "message.sent" is not an event type
    expectTypeOf<WebhookPayload<"message.sent">>();
  });

  it("types each payload's data by its event type (the contract's <Name>EventData)", () => {
    expectTypeOf<WebhookPayload<"message.bounced">["data"]["smtp_code"]>().toEqualTypeOf<number | null | undefined>();
    expectTypeOf<WebhookPayload<"message.bounced">["data"]["bounce_type"]>().toEqualTypeOf<"hard" | "soft">();
    expectTypeOf<WebhookPayload<"message.delivered">["data"]["smtp_code"]>().toEqualTypeOf<number | null>();
    expectTypeOf<WebhookPayload<"message.opened">["data"]["first_open"]>().toEqualTypeOf<boolean>();
    expectTypeOf<WebhookPayload<"message.replied">["data"]["attachments"]>().toEqualTypeOf<InboundAttachment[]>();
    // `data` stays open to fields added within v1 (an index signature of unknown), so what a field
    // of its own is, is seen with that signature taken off.
    type Declared<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
    type OpenedData = Declared<WebhookPayload<"message.opened">["data"]>;
    expectTypeOf<OpenedData["machine_open"]>().toEqualTypeOf<boolean>();
    // @ts-expect-error an open has no smtp_code
    expectTypeOf<OpenedData["smtp_code"]>();
    compileOnly(async () => {
      const event = await mr.webhooks.verify("{}", {}, "whsec_c2VjcmV0");
      if (event.type === "message.deferred") expectTypeOf(event.data.next_attempt_at).toEqualTypeOf<string>();
    });
  });

  it("narrows a domain event to its domain, its statuses and the records found missing", () => {
    type DomainFailed = Extract<WebhookEvent, { type: "domain.failed" }>;
    expectTypeOf<DomainFailed["domain"]>().toEqualTypeOf<Domain>();
    expectTypeOf<DomainFailed["to_status"]>().toEqualTypeOf<DomainStatus>();
    expectTypeOf<DomainFailed["data"]["missing_records"]>().toEqualTypeOf<string[]>();
    // A domain's event belongs to no message.
    expectTypeOf<DomainFailed>().not.toHaveProperty("message_id");
    compileOnly(async () => {
      const event = await mr.webhooks.verify("{}", {}, "whsec_c2VjcmV0");
      if (event.type === "domain.temporary_failure") expectTypeOf(event.domain.grace_ends_at).toEqualTypeOf<string | null>();
      // @ts-expect-error only after narrowing to a domain's event is there a domain
      return event.domain;
    });
  });
});

describe("templates", () => {
  it("creates from slug, name, subject and html, with declared variables of the contract's types", () => {
    expectTypeOf(mr.templates.create).toBeCallableWith({ slug: "welcome", name: "Welcome", subject: "Hi {{ name }}", html: "<p>Hi</p>", variables: [{ name: "name", type: "string", required: true }] });
    // @ts-expect-error `html` is required
    expectTypeOf(mr.templates.create).toBeCallableWith({ slug: "welcome", name: "Welcome", subject: "Hi" });
    // @ts-expect-error "date" is not a variable type
    expectTypeOf(mr.templates.create).toBeCallableWith({ slug: "w", name: "W", subject: "S", html: "H", variables: [{ name: "at", type: "date" }] });
    expectTypeOf(mr.templates.create).returns.resolves.toEqualTypeOf<Template>();
  });

  it("renders a version number or the draft, and lists versions as pages", () => {
    expectTypeOf(mr.templates.render).toBeCallableWith("welcome", { version: "draft", variables: { order: { id: 7 } } });
    expectTypeOf(mr.templates.render).toBeCallableWith("welcome", { version: 3 });
    // @ts-expect-error a version is a number or "draft"
    expectTypeOf(mr.templates.render).toBeCallableWith("welcome", { version: "latest" });
    expectTypeOf(mr.templates.render).returns.resolves.toEqualTypeOf<RenderedTemplate>();
    expectTypeOf(mr.templates.listVersions).returns.toEqualTypeOf<PagePromise<TemplateVersion>>();
    expectTypeOf(mr.templates.getVersion).parameter(1).toEqualTypeOf<number>();
  });

  it("sends a message from a template instead of subject and html", () => {
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", template: { slug: "welcome", variables: { first_name: "Ada" } } });
    expectTypeOf(mr.messages.create).toBeCallableWith({ to: "ada@example.com", template: { slug: "welcome@3" } });
    compileOnly(() =>
      // @ts-expect-error the template is addressed by `slug`
      mr.messages.create({ to: "ada@example.com", template: { name: "welcome" } }),
    );
    expectTypeOf(mr.messages.list).toBeCallableWith({ template: "welcome" });
  });
});

describe("webhook endpoints", () => {
  it("subscribe to event types of the WebhookEventType union, a message's or a domain's, or to all with null", () => {
    expectTypeOf(mr.webhooks.create).toBeCallableWith({ url: "https://acme.example/hooks", event_types: ["message.delivered"] });
    expectTypeOf(mr.webhooks.create).toBeCallableWith({ url: "https://acme.example/hooks", event_types: ["message.bounced", "domain.failed"] });
    expectTypeOf(mr.webhooks.update).toBeCallableWith("whk_1", { event_types: ["domain.temporary_failure"] });
    expectTypeOf(mr.webhooks.test).toBeCallableWith("whk_1", { type: "domain.verified" });
    expectTypeOf<Webhook["event_types"]>().toEqualTypeOf<WebhookEventType[] | null>();
    expectTypeOf(mr.webhooks.update).toBeCallableWith("whk_1", { event_types: null, enabled: false });
    // @ts-expect-error "message.sent" is not an event type
    expectTypeOf(mr.webhooks.create).toBeCallableWith({ url: "https://acme.example/hooks", event_types: ["message.sent"] });
    expectTypeOf(mr.webhooks.create).returns.resolves.toEqualTypeOf<Webhook>();
  });

  it("answer the secret, deliveries, replays and attempts as the contract's objects", () => {
    expectTypeOf(mr.webhooks.getSecret).returns.resolves.toEqualTypeOf<WebhookSecret>();
    expectTypeOf(mr.webhooks.test).returns.resolves.toEqualTypeOf<WebhookDelivery>();
    expectTypeOf(mr.webhooks.redeliverEvent).returns.resolves.toEqualTypeOf<WebhookDelivery>();
    expectTypeOf(mr.webhooks.replayEvents).returns.resolves.toEqualTypeOf<WebhookReplay>();
    expectTypeOf(mr.webhooks.listAttempts).returns.toEqualTypeOf<PagePromise<WebhookAttempt>>();
    expectTypeOf(mr.webhooks.listAttempts).toBeCallableWith("whk_1", { status: "failed" });
  });
});
