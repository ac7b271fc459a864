import { randomBytes } from "node:crypto";
import { changedOnly } from "../domain/changes.js";
import { parseInstant, toIso, toIsoOrNull, type Clock } from "../domain/clock.js";
import { ConflictError, NotFoundError, refusedTarget, ValidationError, WebhookTargetNotAllowedError } from "../domain/errors.js";
import type { Principal, Scope } from "../domain/environments.js";
import type { WebhookEventType } from "../domain/events.js";
import { newId } from "../domain/ids.js";
import { maskUrlCredentials } from "../domain/redact.js";
import { roleAtLeast } from "../domain/roles.js";
import { sampleEvent } from "../domain/sample-events.js";
import { unsendableCredentials } from "../domain/url-credentials.js";
import type { Page, PageRequest } from "../db/pagination.js";
import type { EventsRepository } from "../db/repositories/events.js";
import { WebhookDeliveriesRepository, type AttemptFilters } from "../db/repositories/webhook-deliveries.js";
import { WEBHOOK_URL_MAX_LENGTH, WebhookEndpointsRepository, type WebhookDisabledReason, type WebhookEndpointPatch, type WebhookEndpointRow } from "../db/repositories/webhook-endpoints.js";
import { scopeOf } from "./api-keys.js";
import { removeInBatches } from "./in-batches.js";
import type { SealedBox } from "./sealed-box.js";
import { openSigningSecrets } from "./webhook-secrets.js";
import type { components } from "../../generated/v1.js";

type Webhook = components["schemas"]["Webhook"];
type WebhookSecret = components["schemas"]["WebhookSecret"];
type WebhookDelivery = components["schemas"]["WebhookDelivery"];
type WebhookReplay = components["schemas"]["WebhookReplay"];
type WebhookAttempt = components["schemas"]["WebhookAttempt"];
type DeletedObject = components["schemas"]["DeletedObject"];
type CreateWebhookRequest = components["schemas"]["CreateWebhookRequest"];
type UpdateWebhookRequest = components["schemas"]["UpdateWebhookRequest"];

/** An updateWebhook's answer, and the fields it changed (none: the endpoint was left as it was). */
export interface UpdatedWebhook {
  webhook: Webhook;
  changed: string[];
}

/** Where webhooks may be posted (src/webhooks/target-guard.ts); the same check runs at connect time. */
export interface WebhookTargetPolicy {
  /** The forbidden address the URL's host is or resolves to, or null. */
  forbiddenAddressOf(url: URL): Promise<string | null>;
}

const DEFAULT_OVERLAP_SECONDS = 86_400;

/** How long attempts, and settled deliveries, are kept (docs/webhooks.md#attempts). */
export const WEBHOOK_RETENTION_MS = 30 * 24 * 3600 * 1000;
/** Rows a pruning slice removes at most (of each kind it prunes). */
const PRUNE_SLICE = 1000;

/** Why an endpoint is disabled, in the words of a `webhook_disabled` problem. */
const DISABLED_BECAUSE: Record<WebhookDisabledReason, string> = {
  manual: "by its owner",
  gone: "it answered 410 Gone",
  failing: "its attempts failed for 5 days",
};

/**
 * The endpoint as the caller may see it. A user name and password in its URL are the receiver's
 * HTTP Basic credentials, sent with every delivery: a secret, like the signing secret. A viewer
 * reads endpoints but may not change them, so is shown them masked (`https://***:***@…`), as
 * the signing secret is never shown to them; whoever may edit the URL sees it whole.
 */
function shownTo(principal: Principal, webhook: Webhook): Webhook {
  const { credential } = principal;
  if (credential.kind === "api_key" || roleAtLeast(credential.role, "developer")) return webhook;
  return { ...webhook, url: maskUrlCredentials(webhook.url) };
}

/**
 * A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes (the specification asks
 * for 24 to 64).
 */
const newSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/** Webhook endpoints of one environment, their secrets, and what is sent to them. */
export class WebhooksService {
  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly events: EventsRepository,
    private readonly secrets: SealedBox,
    private readonly targets: WebhookTargetPolicy,
    private readonly clock: Clock,
    /** New deliveries are due: the in-process dispatcher may skip the rest of its poll interval. */
    private readonly notify: () => void = () => undefined,
  ) {}

  async create(principal: Principal, input: CreateWebhookRequest): Promise<Webhook> {
    const scope = scopeOf(principal);
    const url = await this.checkedUrl(input.url);
    const now = this.clock.now();
    const secret = newSecret();
    const enabled = input.enabled ?? true;
    const row: WebhookEndpointRow = {
      id: newId("webhookEndpoint", now),
      workspace_id: scope.workspaceId,
      environment: scope.environment,
      url,
      description: input.description ?? null,
      event_types: eventTypes(input.event_types),
      enabled,
      disabled_reason: enabled ? null : "manual",
      disabled_at: enabled ? null : now,
      failing_since: null,
      secret: this.secrets.seal(secret),
      previous_secret: null,
      previous_secret_expires_at: null,
      created_at: now,
      updated_at: now,
    };
    await this.endpoints.insert(row);
    return { ...WebhookEndpointsRepository.toWire(row), secret };
  }

  async list(principal: Principal, page: PageRequest): Promise<Page<Webhook>> {
    const listed = await this.endpoints.list(scopeOf(principal), page);
    return { ...listed, data: listed.data.map((webhook) => shownTo(principal, webhook)) };
  }

  async get(principal: Principal, id: string): Promise<Webhook> {
    return shownTo(principal, WebhookEndpointsRepository.toWire(await this.endpoint(scopeOf(principal), id)));
  }

  /**
   * Changes what is given. Disabling keeps the endpoint's queued deliveries without attempting
   * them; enabling (also after Mailroom disabled it) resumes them and starts its health afresh.
   * A value given as it is changes nothing: `changed` names only what did, and when that is
   * nothing, nothing is written (`updated_at` stays).
   */
  async update(principal: Principal, id: string, input: UpdateWebhookRequest): Promise<UpdatedWebhook> {
    const scope = scopeOf(principal);
    const current = await this.endpoint(scope, id);
    const now = this.clock.now();
    const changes = changedOnly(current, {
      url: input.url === undefined ? undefined : await this.checkedUrl(input.url),
      description: input.description,
      event_types: input.event_types === undefined ? undefined : sameSubscription(current.event_types, eventTypes(input.event_types)),
      enabled: input.enabled,
    });
    const changed = Object.keys(changes).sort();
    if (changed.length === 0) return { webhook: WebhookEndpointsRepository.toWire(current), changed };
    const { enabled, ...settings } = changes;
    const patch: WebhookEndpointPatch = { ...settings, updated_at: now };
    if (enabled === true) Object.assign(patch, { enabled: true, disabled_reason: null, disabled_at: null, failing_since: null });
    if (enabled === false) Object.assign(patch, { enabled: false, disabled_reason: "manual", disabled_at: now });
    const updated = await this.endpoints.update(scope, id, patch);
    if (!updated) throw new NotFoundError("webhook", id);
    // Enabled: its deliveries are due again. Either way they move into or out of the claim index.
    if (patch.enabled !== undefined) this.notify();
    return { webhook: WebhookEndpointsRepository.toWire(updated), changed };
  }

  async delete(principal: Principal, id: string): Promise<DeletedObject> {
    if (!(await this.endpoints.delete(scopeOf(principal), id, this.clock.now()))) throw new NotFoundError("webhook", id);
    return { id, object: "webhook", deleted: true };
  }

  /** The secrets deliveries are signed with now (openSigningSecrets): a previous secret no key opens any more is shown as none, not a 500. */
  async getSecret(principal: Principal, id: string): Promise<WebhookSecret> {
    const row = await this.endpoint(scopeOf(principal), id);
    const opened = openSigningSecrets(this.secrets, row, this.clock.now());
    return { object: "webhook_secret", secret: opened.current, previous_secret: opened.previous, previous_secret_expires_at: toIsoOrNull(opened.previousExpiresAt) };
  }

  /**
   * A new secret; the one it replaces keeps signing alongside it for `overlap_seconds`. The
   * replaced secret is the one stored when the new one is written, not one read before, so of
   * rotations made at once each caller's secret is stored (the last one's as the secret, the one
   * before it as the previous), as if they were made one after the other.
   */
  async rotateSecret(principal: Principal, id: string, input: { overlap_seconds?: number } | undefined): Promise<Webhook> {
    const now = this.clock.now();
    const overlapMs = (input?.overlap_seconds ?? DEFAULT_OVERLAP_SECONDS) * 1000;
    const secret = newSecret();
    const updated = await this.endpoints.rotateSecret(scopeOf(principal), id, this.secrets.seal(secret), overlapMs > 0 ? now + overlapMs : null, now);
    if (!updated) throw new NotFoundError("webhook", id);
    return { ...WebhookEndpointsRepository.toWire(updated), secret };
  }

  /** Queues a sample event of `type` for the endpoint, subscribed or not, signed and retried as any other. */
  async test(principal: Principal, id: string, type: WebhookEventType): Promise<WebhookDelivery> {
    const scope = scopeOf(principal);
    const endpoint = await this.enabledEndpoint(scope, id);
    const now = this.clock.now();
    const eventId = newId("event", now);
    const payload = JSON.stringify(sampleEvent(type, scope.environment, eventId, toIso(now)));
    const delivery = await this.deliveries.requeue({ endpointId: endpoint.id, eventId }, now, now, payload);
    this.notify();
    return WebhookDeliveriesRepository.toWire(delivery);
  }

  /** Queues one event again now, with the same webhook-id (its event id) and a fresh schedule. */
  async redeliver(principal: Principal, id: string, eventId: string): Promise<WebhookDelivery> {
    const scope = scopeOf(principal);
    const endpoint = await this.enabledEndpoint(scope, id);
    const now = this.clock.now();
    const key = { endpointId: endpoint.id, eventId };
    const event = await this.events.find(scope, eventId);
    let delivery;
    if (event) {
      delivery = await this.deliveries.requeue(key, now, Date.parse(event.created_at));
    } else {
      // A test event has no event row: its delivery carries the payload and can be sent again.
      const sample = await this.deliveries.find(key);
      if (!sample || sample.payload === null) throw new NotFoundError("event", eventId);
      delivery = await this.deliveries.requeue(key, now, sample.event_created_at, sample.payload);
    }
    this.notify();
    return WebhookDeliveriesRepository.toWire(delivery);
  }

  /** Queues again, in the events' order, every delivery to the endpoint that failed since `since`. */
  async replay(principal: Principal, id: string, since: string): Promise<WebhookReplay> {
    const endpoint = await this.enabledEndpoint(scopeOf(principal), id);
    const sinceMs = parseInstant(since);
    if (Number.isNaN(sinceMs)) throw ValidationError.field("/since", "must be an RFC 3339 date-time");
    const count = await this.deliveries.replayFailed(endpoint.id, sinceMs, this.clock.now());
    if (count > 0) this.notify();
    return { object: "webhook_replay", webhook_id: endpoint.id, since: toIso(sinceMs), count };
  }

  async listAttempts(principal: Principal, id: string, filters: AttemptFilters, page: PageRequest): Promise<Page<WebhookAttempt>> {
    const endpoint = await this.endpoint(scopeOf(principal), id);
    return this.deliveries.listAttempts(endpoint.id, filters, page);
  }

  /**
   * Forgets attempts and settled deliveries past the retention period, and deleted endpoints'
   * deliveries and attempts, slice by slice until none is left (each slice's statements are short,
   * so accepting and sending go on between them). Returns how many rows went.
   */
  async prune(): Promise<number> {
    const before = this.clock.now() - WEBHOOK_RETENTION_MS;
    // A slice that comes back short has nothing more: pruneBefore answers the sum of two kinds,
    // each at most PRUNE_SLICE, so a sum under it means both were short.
    const expired = await removeInBatches((limit) => this.deliveries.pruneBefore(before, limit), PRUNE_SLICE);
    return expired + (await removeInBatches((limit) => this.deliveries.purgeDeleted(limit), PRUNE_SLICE));
  }

  private async endpoint(scope: Scope, id: string): Promise<WebhookEndpointRow> {
    const row = await this.endpoints.find(scope, id);
    if (!row) throw new NotFoundError("webhook", id);
    return row;
  }

  /**
   * The endpoint, for a request that queues deliveries to be sent now (test, redeliver, replay).
   * A disabled endpoint is sent nothing and has no new deliveries queued for it, so such a
   * request is refused rather than answered 202 for deliveries that would only wait. An endpoint
   * disabled just after this check parks them, as it does its other queued deliveries.
   */
  private async enabledEndpoint(scope: Scope, id: string): Promise<WebhookEndpointRow> {
    const row = await this.endpoint(scope, id);
    if (!row.enabled) {
      throw new ConflictError(
        "webhook_disabled",
        "Webhook endpoint disabled",
        `Webhook endpoint ${id} is disabled (${DISABLED_BECAUSE[row.disabled_reason ?? "manual"]}) and is sent nothing: enable it first (enabled: true), then try again.`,
      );
    }
    return row;
  }

  /**
   * The URL as stored: http or https, with a host that is not, and does not resolve to, a
   * forbidden address. A host that does not resolve yet is accepted; every delivery checks again.
   * What is stored and posted to is the parsed URL, which percent-encodes characters the contract
   * lets through as they are (a `'` in the query becomes `%27`): that form must fit the column too,
   * or MySQL in strict mode would refuse the row and SQLite would keep a URL longer than allowed.
   */
  private async checkedUrl(raw: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw ValidationError.field("/url", "must be an absolute http or https URL");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw ValidationError.field("/url", "must be an http or https URL");
    // WHATWG URL parsing repairs what it can: "http:///ok" becomes http://ok/. The URL must be
    // right as written, scheme, "//" and a host, or what is stored would not be what was sent.
    if (url.hostname === "" || !WRITTEN_WITH_HOST.test(raw)) throw ValidationError.field("/url", "must name a host: http:// or https://, then the host");
    const unsendable = unsendableCredentials(url);
    if (unsendable) throw ValidationError.field("/url", `has a user name or password that ${unsendable}`);
    const stored = url.toString();
    if (stored.length > WEBHOOK_URL_MAX_LENGTH) {
      throw ValidationError.field("/url", `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters once normalised (percent-encoded, this one is ${stored.length})`);
    }
    const forbidden = await this.targets.forbiddenAddressOf(url);
    if (forbidden !== null) throw new WebhookTargetNotAllowedError(refusedTarget(url.hostname.replace(/^\[|\]$/g, ""), forbidden));
    return stored;
  }
}

const WRITTEN_WITH_HOST = /^https?:\/\/[^/\\?#@]/i;

/** The event types given, or those stored when they name the same types in another order: that is no change. */
function sameSubscription(stored: WebhookEventType[] | null, given: WebhookEventType[] | null): WebhookEventType[] | null {
  if (stored === null || given === null || stored.length !== given.length) return given;
  const storedTypes = new Set(stored);
  return given.every((type) => storedTypes.has(type)) ? stored : given;
}

/** Absent or null: every type (stored as null so types added later are included). */
function eventTypes(types: WebhookEventType[] | null | undefined): WebhookEventType[] | null {
  return types == null ? null : [...new Set(types)];
}
