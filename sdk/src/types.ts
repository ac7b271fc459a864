// Request and response types of every operation, taken from the contract's generated types so
// that a contract change the SDK ignores fails to compile. Nothing here is written by hand but
// the mapping, and the message content rule the contract states in prose (WithMessageContent).
import type { components, operations, webhooks } from "./generated/v1.js";

/** The operations of the contract's `webhooks:` section: Mailroom sends them, it serves none. */
type WebhookOperation = webhooks[keyof webhooks]["post"];

/** The operations a client can call: the contract's paths, not its webhook payloads. */
export type OperationId = { [Id in keyof operations]: operations[Id] extends WebhookOperation ? never : Id }[keyof operations];
type Operation<Id extends OperationId> = operations[Id];

/** The JSON request body of an operation. */
export type RequestBody<Id extends OperationId> =
  Operation<Id> extends { requestBody?: { content: { "application/json": infer Body } } } ? Body : never;

/** The query parameters of an operation (filters and pagination). */
export type QueryParams<Id extends OperationId> = NonNullable<Operation<Id>["parameters"]["query"]>;

/** The JSON body of an operation's success response (its one 2xx). */
export type ResponseBody<Id extends OperationId> = {
  [Status in keyof Operation<Id>["responses"]]: Status extends 200 | 201 | 202
    ? Operation<Id>["responses"][Status] extends { content: { "application/json": infer Body } }
      ? Body
      : never
    : never;
}[keyof Operation<Id>["responses"]];

/** The item type of a list operation. */
export type ListItem<Id extends OperationId> = ResponseBody<Id> extends { data: (infer Item)[] } ? Item : never;

/** The fields that make a message's content. */
type ContentField = "subject" | "html" | "text" | "template";

/**
 * A message body with its content rule as a type: `subject` with `html` and/or `text`, or a
 * `template` instead of all three. The contract states the rule in prose (a union of `required`
 * lists there would answer a missing body with anyOf errors in place of the server's own
 * messages); carried here, a message without content fails to compile instead of answering 422.
 */
export type WithMessageContent<Body extends Partial<Record<ContentField, unknown>>> = Omit<Body, ContentField> & ContentForms<Body>;

/** The forms a message's content takes, its field types taken from the body. */
type ContentForms<Body extends Partial<Record<ContentField, unknown>>> =
  | { subject: NonNullable<Body["subject"]>; html: NonNullable<Body["html"]>; text?: Body["text"]; template?: never }
  | { subject: NonNullable<Body["subject"]>; html?: Body["html"]; text: NonNullable<Body["text"]>; template?: never }
  | { template: NonNullable<Body["template"]>; subject?: never; html?: never; text?: never };

/** A message's content alone, in one of its forms: what builds a CreateMessageParams' content. */
export type MessageContent = ContentForms<RequestBody<"createMessage">>;

type Schemas = components["schemas"];
export type Message = Schemas["Message"];
export type MessageSummary = Schemas["MessageSummary"];
export type MessageStatus = Schemas["MessageStatus"];
export type Recipient = Schemas["Recipient"];
export type Event = Schemas["Event"];
export type EventType = Schemas["EventType"];
export type DomainEvent = Schemas["DomainEvent"];
export type DomainEventType = Schemas["DomainEventType"];
export type WebhookEventType = Schemas["WebhookEventType"];
export type AuditEvent = Schemas["AuditEvent"];
export type Actor = Schemas["Actor"];
export type RequestLog = Schemas["RequestLog"];
export type ApiKey = Schemas["ApiKey"];
export type ApiKeyWithSecret = Schemas["ApiKeyWithSecret"];
export type ApiKeyRestrictions = Schemas["ApiKeyRestrictions"];
export type Workspace = Schemas["Workspace"];
export type Role = Schemas["Role"];
export type User = Schemas["User"];
export type WorkspaceMembership = Schemas["WorkspaceMembership"];
export type Account = Schemas["Account"];
export type Member = Schemas["Member"];
export type Invitation = Schemas["Invitation"];
export type InvitationWithUrl = Schemas["InvitationWithUrl"];
export type MessageBatch = Schemas["MessageBatch"];
export type MessageBatchItem = Schemas["MessageBatchItem"];
export type MessagePreview = Schemas["MessagePreview"];
export type MessagePreviewRecipient = Schemas["MessagePreviewRecipient"];
export type Domain = Schemas["Domain"];
export type DomainStatus = Schemas["DomainStatus"];
export type DomainRecord = Schemas["DomainRecord"];
export type DomainDkimKey = Schemas["DomainDkimKey"];
export type Suppression = Schemas["Suppression"];
export type SuppressionReason = Schemas["SuppressionReason"];
export type SuppressionBatch = Schemas["SuppressionBatch"];
export type SuppressionBatchItem = Schemas["SuppressionBatchItem"];
export type Usage = Schemas["Usage"];
export type UsageCount = Schemas["UsageCount"];
export type UsageDay = Schemas["UsageDay"];
export type UsageMonth = Schemas["UsageMonth"];
export type Metrics = Schemas["Metrics"];
export type MetricCounts = Schemas["MetricCounts"];
export type MetricBucket = Schemas["MetricBucket"];
export type DeletedObject = Schemas["DeletedObject"];
export type Template = Schemas["Template"];
export type TemplateVariable = Schemas["TemplateVariable"];
export type TemplateVersion = Schemas["TemplateVersion"];
export type TemplateVersionState = Schemas["TemplateVersionState"];
export type RenderedTemplate = Schemas["RenderedTemplate"];
export type MessageTemplate = Schemas["MessageTemplate"];
export type MessageTemplateInput = Schemas["MessageTemplateInput"];
export type Webhook = Schemas["Webhook"];
export type WebhookStatus = Schemas["WebhookStatus"];
export type WebhookDisabledReason = Schemas["WebhookDisabledReason"];
export type WebhookSecret = Schemas["WebhookSecret"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type WebhookDeliveryStatus = Schemas["WebhookDeliveryStatus"];
export type WebhookReplay = Schemas["WebhookReplay"];
export type WebhookAttempt = Schemas["WebhookAttempt"];
export type WebhookAttemptStatus = Schemas["WebhookAttemptStatus"];
export type MessageTracking = Schemas["MessageTracking"];
export type MessageEngagement = Schemas["MessageEngagement"];
export type WorkspaceTracking = Schemas["WorkspaceTracking"];
export type InboundMessage = Schemas["InboundMessage"];
export type InboundAttachment = Schemas["InboundAttachment"];
export type InboundAuthenticationResult = Schemas["InboundAuthenticationResult"];
export type CreateMessageParams = WithMessageContent<RequestBody<"createMessage">>;
export type PreviewMessageParams = WithMessageContent<RequestBody<"previewMessage">>;
export type ListMessagesParams = QueryParams<"listMessages">;
export type ListMessageEventsParams = QueryParams<"listMessageEvents">;
export type RescheduleMessageParams = RequestBody<"rescheduleMessage">;
export type ListEventsParams = QueryParams<"listEvents">;
export type ListAuditEventsParams = QueryParams<"listAuditEvents">;
export type ListRequestLogsParams = QueryParams<"listRequestLogs">;
export type ListApiKeysParams = QueryParams<"listApiKeys">;
export type CreateApiKeyParams = RequestBody<"createApiKey">;
export type RotateApiKeyParams = RequestBody<"rotateApiKey">;
export type UpdateApiKeyParams = RequestBody<"updateApiKey">;
export type UpdateWorkspaceParams = RequestBody<"updateWorkspace">;
export type UpdateAccountParams = RequestBody<"updateAccount">;
export type CreateWorkspaceParams = RequestBody<"createWorkspace">;
export type ListMembersParams = QueryParams<"listMembers">;
export type UpdateMemberParams = RequestBody<"updateMember">;
export type CreateInvitationParams = RequestBody<"createInvitation">;
export type ListInvitationsParams = QueryParams<"listInvitations">;
export type CreateMessageBatchParams = Omit<RequestBody<"createMessageBatch">, "messages"> & { messages: CreateMessageParams[] };
export type CreateDomainParams = RequestBody<"createDomain">;
export type ListDomainsParams = QueryParams<"listDomains">;
export type ListSuppressionsParams = QueryParams<"listSuppressions">;
export type CreateSuppressionParams = RequestBody<"createSuppression">;
export type CreateSuppressionBatchParams = RequestBody<"createSuppressionBatch">;
export type GetUsageParams = QueryParams<"getUsage">;
export type GetMetricsParams = QueryParams<"getMetrics">;
export type CreateTemplateParams = RequestBody<"createTemplate">;
export type ListTemplatesParams = QueryParams<"listTemplates">;
export type UpdateTemplateParams = RequestBody<"updateTemplate">;
export type PublishTemplateParams = RequestBody<"publishTemplate">;
export type ListTemplateVersionsParams = QueryParams<"listTemplateVersions">;
export type RenderTemplateParams = RequestBody<"renderTemplate">;
export type CreateWebhookParams = RequestBody<"createWebhook">;
export type ListWebhooksParams = QueryParams<"listWebhooks">;
export type UpdateWebhookParams = RequestBody<"updateWebhook">;
export type RotateWebhookSecretParams = RequestBody<"rotateWebhookSecret">;
export type TestWebhookParams = RequestBody<"testWebhook">;
export type RedeliverWebhookEventParams = RequestBody<"redeliverWebhookEvent">;
export type ReplayWebhookEventsParams = RequestBody<"replayWebhookEvents">;
export type ListWebhookAttemptsParams = QueryParams<"listWebhookAttempts">;
export type UpdateDomainParams = RequestBody<"updateDomain">;
export type ListMessageRepliesParams = QueryParams<"listMessageReplies">;

/**
 * What a webhook delivery of event `Type` carries: the contract's top-level `webhooks:` payload
 * for it (an Event, or for a `domain.*` type a DomainEvent, whose `type` is `Type`).
 */
export type WebhookPayload<Type extends keyof webhooks> = webhooks[Type]["post"] extends { requestBody: { content: { "application/json": infer Body } } } ? Body : never;

/**
 * Every webhook payload, told apart by `type`: what `mr.webhooks.verify` returns. Checking
 * `event.type` narrows it to a message's Event or a domain's DomainEvent.
 */
export type WebhookEvent = { [Type in keyof webhooks]: WebhookPayload<Type> }[keyof webhooks];
export type { components, operations, paths, webhooks } from "./generated/v1.js";
