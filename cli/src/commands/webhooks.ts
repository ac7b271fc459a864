import type { Argv } from "yargs";
import type { UpdateWebhookParams, Webhook, WebhookAttempt, WebhookAttemptStatus, WebhookDelivery, WebhookSecret } from "mailroom";
import type { Args, Noun } from "../command.js";
import { UsageError, definedOnly, optionalString, overlapSecondsOf, requiredString } from "../command.js";
import { EVENT_TYPE_FLAG, WEBHOOK_EVENT_TYPES, eventTypeFlag, eventTypeList, oneEventType } from "../event-types.js";
import { listFlags, listQuery, printList } from "../list.js";
import { cell, fields } from "../output.js";
import { parsePastInstant, refuseRelativeWithKey } from "../time.js";
import { confirm, withYes } from "../confirm.js";

const GIVE_TEST_TYPE = "Give the --event-type to send.";
const idempotencyFlag = { type: "string", describe: "Make retries of this call safe" } as const;
const ATTEMPT_STATUSES = ["succeeded", "failed"] as const satisfies readonly WebhookAttemptStatus[];

const webhookColumns = {
  headers: ["ID", "URL", "STATUS", "EVENTS"],
  row: (webhook: Webhook) => [webhook.id, cell(webhook.url, 50), statusOf(webhook), eventsOf(webhook, 40)],
};

const attemptColumns = {
  headers: ["CREATED", "EVENT", "ATTEMPT", "STATUS", "ANSWER", "DURATION"],
  row: (attempt: WebhookAttempt) => [attempt.created_at, attempt.event_id, String(attempt.attempt), attempt.status, answerOf(attempt), `${attempt.duration_ms} ms`],
};

const statusOf = (webhook: Webhook) => (webhook.disabled_reason ? `${webhook.status} (${webhook.disabled_reason})` : webhook.status);
const eventsOf = (webhook: Webhook, max?: number) => (webhook.event_types === null ? "all" : cell(webhook.event_types, max));
const answerOf = (attempt: WebhookAttempt) => (attempt.response_status === null ? (attempt.error ?? "") : String(attempt.response_status));

/** The flags create and update share: one per field of the endpoint. */
function endpointFlags(yargs: Argv, { update }: { update: boolean }): Argv {
  return yargs
    .option("url", { type: "string", describe: "Where events are POSTed (http or https)", ...(update ? {} : { demandOption: "Give the endpoint's --url." }) })
    .option(EVENT_TYPE_FLAG, eventTypeFlag("Only this event type, a message's or a domain's (repeatable, or comma-separated); default every type", { several: true }))
    .option("description", { type: "string", describe: update ? "A note of your own; --no-description clears it" : "A note of your own" })
    .option("enabled", { type: "string", describe: update ? "true sends events to it (and re-enables one Mailroom disabled); false stops" : "false adds it disabled" });
}

/**
 * `--enabled true|false`, the value always said: as a yargs boolean, `--enabled yes` left "yes"
 * over as an unknown argument and a bare `--enabled` silently enabled. `--no-enabled` is false.
 */
function enabledOf(args: Args): boolean | undefined {
  const value = args.enabled;
  if (value === undefined) return undefined;
  if (value === "true") return true;
  if (value === "false" || value === false) return false;
  throw new UsageError(`--enabled takes true or false; got "${String(value)}".`);
}

function renderWebhook(webhook: Webhook): string {
  const details = fields([
    ["id", webhook.id],
    ["url", webhook.url],
    ["environment", webhook.environment],
    ["description", webhook.description],
    ["event_types", eventsOf(webhook)],
    ["status", statusOf(webhook)],
    ["disabled_at", webhook.disabled_at],
    ["failing_since", webhook.failing_since],
    ["created_at", webhook.created_at],
    ["updated_at", webhook.updated_at],
  ]);
  return webhook.secret ? `${details}\n\nsecret  ${webhook.secret}` : details;
}

/** After a create, the only answer that holds the secret: what to do with it. */
const SECRET_HINT = "Verify each delivery's signature with this secret (mr.webhooks.verify, or any Standard Webhooks library). mailroom webhooks get-secret shows it again.";

function renderSecret(secret: WebhookSecret): string {
  return fields([
    ["secret", secret.secret],
    ["previous_secret", secret.previous_secret],
    ["previous_secret_expires_at", secret.previous_secret_expires_at],
  ]);
}

function renderDelivery(delivery: WebhookDelivery): string {
  const summary = fields([
    ["webhook_id", delivery.webhook_id],
    ["event_id", delivery.event_id],
    ["status", delivery.status],
    ["attempts", delivery.attempts],
    ["next_attempt_at", delivery.next_attempt_at],
  ]);
  return summary;
}

const followDelivery = (delivery: WebhookDelivery) => `Queued. Follow it with: mailroom webhooks list-attempts ${delivery.webhook_id} --event-id ${delivery.event_id}`;

export const webhooks: Noun = {
  name: "webhooks",
  describe: "Endpoints that receive this environment's events as signed POSTs",
  commands: [
    {
      command: "create",
      describe: "Add an endpoint; prints its signing secret",
      operationId: "createWebhook",
      examples: [
        ["$0 webhooks create --url https://acme.example/hooks/mailroom --event-type message.delivered --event-type message.bounced", "An endpoint for two event types"],
        ["$0 webhooks create --url https://acme.example/hooks/dns --event-type domain.temporary_failure,domain.failed", "Hear when a sending domain's DNS records go missing"],
        ["$0 webhooks create --url https://acme.example/hooks/mailroom --json | jq -r .secret", "Every event type; keep the secret"],
      ],
      noForms: ["enabled"],
      builder: (yargs) => endpointFlags(yargs, { update: false }).option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        const body = {
          url: requiredString(args, "url"),
          ...definedOnly({ event_types: eventTypeList(args, WEBHOOK_EVENT_TYPES), description: optionalString(args, "description"), enabled: enabledOf(args) }),
        };
        const webhook = await client().webhooks.create(body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(webhook, () => renderWebhook(webhook), () => (webhook.secret ? SECRET_HINT : undefined));
      },
    },
    {
      command: "list",
      describe: "List the environment's endpoints, newest first",
      operationId: "listWebhooks",
      examples: [["$0 webhooks list", "Every endpoint and whether it is enabled"]],
      builder: (yargs) => listFlags(yargs, { createdRange: false }),
      async run(context, args) {
        await printList(context, args, context.client().webhooks.list(listQuery(args, { createdRange: false })), webhookColumns);
      },
    },
    {
      command: "get <webhook_id>",
      describe: "Show an endpoint (without its secret) and, when Mailroom disabled it, why",
      operationId: "getWebhook",
      examples: [["$0 webhooks get whk_01jd3k8m2q5v7w9x1y3z5a7b9c", "One endpoint"]],
      async run({ client, output }, args) {
        const webhook = await client().webhooks.get(requiredString(args, "webhook_id"));
        output.result(webhook, () => renderWebhook(webhook));
      },
    },
    {
      command: "update <webhook_id>",
      describe: "Change an endpoint's URL, event types, description, or enable or disable it",
      operationId: "updateWebhook",
      examples: [
        ["$0 webhooks update whk_01jd3k8m2q5v7w9x1y3z5a7b9c --enabled true", "Re-enable it once the receiver is fixed"],
        ["$0 webhooks update whk_01jd3k8m2q5v7w9x1y3z5a7b9c --all-events", "Subscribe to every event type"],
      ],
      noForms: ["description", "enabled"],
      builder: (yargs) =>
        endpointFlags(yargs, { update: true }).option("all-events", { type: "boolean", describe: "Send every event type, including types added later", conflicts: EVENT_TYPE_FLAG }),
      async run({ client, output }, args) {
        const body: UpdateWebhookParams = definedOnly({
          url: optionalString(args, "url"),
          event_types: args["all-events"] === true ? null : eventTypeList(args, WEBHOOK_EVENT_TYPES),
          description: args.description === false ? null : optionalString(args, "description"),
          enabled: enabledOf(args),
        });
        if (Object.keys(body).length === 0) throw new UsageError("Nothing to update: give --url, --event-type (or --all-events), --description (or --no-description) or --enabled.");
        const webhook = await client().webhooks.update(requiredString(args, "webhook_id"), body);
        output.result(webhook, () => renderWebhook(webhook));
      },
    },
    {
      command: "delete <webhook_id>",
      describe: "Remove an endpoint, its pending deliveries and its recorded attempts",
      operationId: "deleteWebhook",
      examples: [["$0 webhooks delete whk_01jd3k8m2q5v7w9x1y3z5a7b9c", "Stop sending to an endpoint"], ["$0 webhooks delete whk_01jd3k8m2q5v7w9x1y3z5a7b9c --yes", "The same without asking, as a script must"]],
      builder: withYes,
      async run(context, args) {
        const { client, output } = context;
        const id = requiredString(args, "webhook_id");
        await confirm(context, args, { command: "webhooks delete", verb: "delete", what: `webhook endpoint ${id}`, consequence: "Its pending deliveries and recorded attempts go with it; this cannot be undone." });
        const deleted = await client().webhooks.delete(id);
        output.result(deleted, () => `Deleted ${deleted.id}: nothing more is sent to it.`);
      },
    },
    {
      command: "get-secret <webhook_id>",
      aliases: ["secret"],
      describe: "Show an endpoint's signing secret (and the previous one during a rotation's overlap)",
      operationId: "getWebhookSecret",
      examples: [["$0 webhooks secret whk_01jd3k8m2q5v7w9x1y3z5a7b9c --json | jq -r .secret", "The secret, for the receiver's configuration"]],
      async run({ client, output }, args) {
        const secret = await client().webhooks.getSecret(requiredString(args, "webhook_id"));
        output.result(secret, () => renderSecret(secret));
      },
    },
    {
      command: "rotate-secret <webhook_id>",
      describe: "Issue a new signing secret; deliveries carry both signatures for the overlap",
      operationId: "rotateWebhookSecret",
      examples: [
        ["$0 webhooks rotate-secret whk_01jd3k8m2q5v7w9x1y3z5a7b9c --overlap-seconds 3600", "New secret; the old one also for 1 h"],
      ],
      builder: (yargs) =>
        yargs
          .option("overlap-seconds", { type: "string", describe: "How long deliveries also carry the old secret's signature (default 86400; 0 ends it now)" })
          .option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        const webhook = await client().webhooks.rotateSecret(
          requiredString(args, "webhook_id"),
          definedOnly({ overlap_seconds: overlapSecondsOf(args) }),
          definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }),
        );
        output.result(webhook, () => renderWebhook(webhook));
      },
    },
    {
      command: "test <webhook_id>",
      describe: "Queue a sample event of a type for the endpoint, signed and retried like any other",
      operationId: "testWebhook",
      examples: [["$0 webhooks test whk_01jd3k8m2q5v7w9x1y3z5a7b9c --type message.delivered", "Check that the receiver answers 2xx"]],
      builder: (yargs) =>
        yargs
          .option(EVENT_TYPE_FLAG, { ...eventTypeFlag("The event type to send, a message's or a domain's", { several: false }), demandOption: GIVE_TEST_TYPE })
          .option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        // Given but empty (`--event-type ""`) gets past yargs' demand.
        const type = oneEventType(args, WEBHOOK_EVENT_TYPES);
        if (type === undefined) throw new UsageError(GIVE_TEST_TYPE);
        const delivery = await client().webhooks.test(
          requiredString(args, "webhook_id"),
          { type },
          definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }),
        );
        output.result(delivery, () => renderDelivery(delivery), () => followDelivery(delivery));
      },
    },
    {
      command: "redeliver-event <webhook_id>",
      aliases: ["redeliver"],
      describe: "Queue one event for the endpoint again, with the same webhook-id",
      operationId: "redeliverWebhookEvent",
      examples: [["$0 webhooks redeliver whk_01jd3k8m2q5v7w9x1y3z5a7b9c --event-id evt_01jd3k8m3a5v7w9x1y3z5a7b9d", "Send one event again"]],
      builder: (yargs) =>
        yargs.option("event-id", { type: "string", describe: "The event to send again (evt_…)", demandOption: "Give the event with --event-id." }).option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        const delivery = await client().webhooks.redeliverEvent(
          requiredString(args, "webhook_id"),
          { event_id: requiredString(args, "event-id") },
          definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }),
        );
        output.result(delivery, () => renderDelivery(delivery), () => followDelivery(delivery));
      },
    },
    {
      command: "replay-events <webhook_id>",
      aliases: ["replay"],
      describe: "Queue again every failed delivery of the events since a time, in order",
      operationId: "replayWebhookEvents",
      examples: [["$0 webhooks replay whk_01jd3k8m2q5v7w9x1y3z5a7b9c --since 1d", "What failed in the last day, again"]],
      builder: (yargs) =>
        yargs
          .option("since", { type: "string", describe: "Events created at or after then (RFC 3339, or a duration ago: 2h, 1d)", demandOption: "Give --since (e.g. 1d or 2026-11-21T00:00:00Z)." })
          .option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        refuseRelativeWithKey(args, ["since"]);
        const since = parsePastInstant(requiredString(args, "since"), "since");
        const replay = await client().webhooks.replayEvents(requiredString(args, "webhook_id"), { since }, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(replay, () => `Queued ${replay.count} failed deliver${replay.count === 1 ? "y" : "ies"} since ${replay.since} again.`);
      },
    },
    {
      command: "list-attempts <webhook_id>",
      aliases: ["attempts"],
      describe: "List the HTTP attempts made to an endpoint, newest first",
      operationId: "listWebhookAttempts",
      examples: [
        ["$0 webhooks attempts whk_01jd3k8m2q5v7w9x1y3z5a7b9c --status failed", "What the receiver answered when it failed"],
        ["$0 webhooks attempts whk_01jd3k8m2q5v7w9x1y3z5a7b9c --event-id evt_01jd3k8m3a5v7w9x1y3z5a7b9d", "Every attempt to deliver one event"],
      ],
      builder: (yargs) =>
        listFlags(yargs, { createdRange: false })
          .option("status", { type: "string", choices: ATTEMPT_STATUSES, describe: "Only attempts with this outcome" })
          .option("event-id", { type: "string", describe: "Only attempts to deliver this event" }),
      async run(context, args) {
        const filters = definedOnly({ status: optionalString(args, "status") as WebhookAttemptStatus | undefined, event_id: optionalString(args, "event-id") });
        const list = context.client().webhooks.listAttempts(requiredString(args, "webhook_id"), { ...listQuery(args, { createdRange: false }), ...filters });
        await printList(context, args, list, attemptColumns);
      },
    },
  ],
};
