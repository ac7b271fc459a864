import type { Principal } from "./environments.js";

/**
 * Errors thrown by services and repositories. They carry a stable `code` and an HTTP-neutral
 * kind; src/http/problems.ts shapes them into RFC 9457 documents in one place.
 */
export type ErrorKind =
  | "bad_request"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "unprocessable"
  | "unsupported_media"
  | "rate_limited"
  | "gone"
  | "unavailable";

export interface FieldError {
  location: "body" | "query" | "path" | "header";
  pointer: string;
  message: string;
  /** For a template's syntax or render error: the line of the field's source. */
  line?: number;
}

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    readonly title: string,
    message: string,
    readonly extra: { errors?: FieldError[]; retryAfterSeconds?: number; extensions?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** What belongs to the workspace and serves both its environments (DESIGN.md §6), by the name NotFoundError gets. */
const WORKSPACE_WIDE = new Set(["domain", "member", "pending invitation", "template", "template version", "user"]);

export class NotFoundError extends DomainError {
  constructor(resource: string, id: string) {
    const where = resource === "workspace" ? "that you are a member of" : WORKSPACE_WIDE.has(resource) ? "in this workspace" : "in this environment";
    super("not_found", "not_found", "Not found", `No ${resource} ${id} ${where}.`);
  }
}

/** It existed, but its content was removed for good by the workspace's content retention (docs/retention.md). */
export class ContentRemovedError extends DomainError {
  constructor(resource: string, id: string) {
    super("gone", "content_removed", "Content removed", `The content of ${resource} ${id} was removed by the workspace's content retention.`);
  }
}

export class ValidationError extends DomainError {
  constructor(errors: FieldError[]) {
    super(
      "unprocessable",
      "validation_failed",
      "Validation failed",
      errors.length === 1 ? `${errors[0]!.pointer || "The request"}: ${errors[0]!.message}` : `${errors.length} fields are invalid.`,
      { errors },
    );
  }

  /** One failing body field. */
  static field(pointer: string, message: string): ValidationError {
    return new ValidationError([{ location: "body", pointer, message }]);
  }
}

/** Live mail from a domain that is not a verified domain of the workspace (DESIGN.md §9). */
export class SenderDomainNotVerifiedError extends DomainError {
  constructor(domain: string, known: boolean) {
    const fix = known
      ? `publish its DNS records (the domain lists them) and verify it`
      : `add it as a domain of the workspace, publish the DNS records it is given, then verify it`;
    super("unprocessable", "sender_domain_not_verified", "Sender domain not verified", `Live mail from ${domain} needs ${domain} to be a verified domain of this workspace: ${fix}. Sandbox keys may send from any domain.`, {
      errors: [{ location: "body", pointer: "/from", message: `${domain} is not a verified domain of this workspace` }],
    });
  }
}

/**
 * A strict batch (createMessageBatch `validation: strict`) with a message that would be refused:
 * nothing is stored, and every refused message's problems are listed, their pointers under
 * `/messages/<index>`. A problem without pointers (a key restriction without one, say) points at
 * its message, with its code leading the text.
 */
export class BatchRejectedError extends DomainError {
  constructor(refused: ReadonlyArray<{ index: number; error: DomainError }>) {
    const errors = refused.flatMap(({ index, error }): FieldError[] => {
      const at = `/messages/${index}`;
      const own = error.extra.errors ?? [];
      return own.length > 0 ? own.map((e) => ({ ...e, location: "body", pointer: `${at}${e.pointer}` })) : [{ location: "body", pointer: at, message: `${error.code}: ${error.message}` }];
    });
    const which = refused.map((r) => r.index).join(", ");
    super("unprocessable", "batch_rejected", "Batch rejected", `The batch is strict and ${refused.length === 1 ? "message" : "messages"} ${which} would be refused, so none was accepted.`, { errors });
  }
}

/** A template that parsed but failed while rendering: past a limit, or an error at run time. */
export class TemplateRenderFailedError extends DomainError {
  constructor(errors: FieldError[]) {
    super("unprocessable", "template_render_failed", "Template render failed", errors.length === 1 ? `${errors[0]!.pointer}: ${errors[0]!.message}` : `${errors.length} fields failed to render.`, { errors });
  }
}

/**
 * Why a host is refused (SSRF), in words a caller may see: a literal address is named, the one a
 * host name resolved to is not, since that would map the operator's internal names to their
 * addresses for anyone who can save a URL.
 */
export function refusedTarget(host: string, address: string): string {
  return `${host} ${host === address ? "is" : "resolves to"} a private, loopback or link-local address`;
}

/** A webhook URL whose host is, or resolves to, an address Mailroom refuses to post to (SSRF). */
export class WebhookTargetNotAllowedError extends DomainError {
  /** `refused` says why without naming a resolved address (TargetNotAllowedError's message). */
  constructor(refused: string) {
    super("unprocessable", "webhook_target_not_allowed", "Webhook target not allowed", `${refused}: Mailroom does not post webhooks into its own network unless the operator allows it (WEBHOOK_ALLOW_PRIVATE_TARGETS).`, {
      errors: [{ location: "body", pointer: "/url", message: refused }],
    });
  }
}

export class ConflictError extends DomainError {
  /** `extensions`: members the problem document carries besides the standard ones (the contract's `Problem`). */
  constructor(code: string, title: string, message: string, retryAfterSeconds?: number, extensions?: Record<string, unknown>) {
    super("conflict", code, title, message, { ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }), ...(extensions === undefined ? {} : { extensions }) });
  }
}

/** The detail of every refused credential, API key or user access token alike. */
export const INVALID_CREDENTIAL_DETAIL = "Send a valid, unrevoked API key (`svc_…`) or user access token (`mru_…`) as `Authorization: Bearer …`.";

/** Same answer for missing, malformed, unknown, revoked and expired keys: no oracle. */
export class AuthenticationError extends DomainError {
  constructor() {
    super("unauthenticated", "invalid_api_key", "Invalid API key", INVALID_CREDENTIAL_DETAIL);
  }
}

export class PermissionDeniedError extends DomainError {
  constructor(needed: string, has: string) {
    super("forbidden", "insufficient_permission", "Insufficient permission", `This operation needs a ${needed} key; this key has ${has}.`);
  }
}

/** The caller's address is outside the key's `restrictions.allowed_ips` (docs/api-keys.md). */
export class IpNotAllowedError extends DomainError {
  /** Whose key it was: the request log records the refusal in its workspace (never answered). */
  constructor(
    address: string,
    readonly refused: Principal,
  ) {
    super("forbidden", "ip_not_allowed", "Address not allowed", `This API key may only be used from its allowed addresses (restrictions.allowed_ips); this request came from ${address}.`);
  }
}

/** The message's sender is outside the key's `restrictions.sender_domains`. */
export class SenderNotAllowedError extends DomainError {
  constructor(sender: string, allowed: readonly string[]) {
    super("forbidden", "sender_not_allowed", "Sender not allowed for this key", `This API key may send only from ${allowed.join(", ")} (restrictions.sender_domains); the sender is ${sender}.`, {
      errors: [{ location: "body", pointer: "/from", message: `${sender} is not at a domain this key may send from` }],
    });
  }
}

/** Some recipients are outside the key's `restrictions.recipient_domains`. */
export class RecipientNotAllowedError extends DomainError {
  /** `refused` as given, each with its pointer; the detail names each address once. */
  constructor(refused: ReadonlyArray<{ pointer: string; email: string }>, allowed: readonly string[]) {
    const addresses = refused.map((r) => r.email).filter((email, i, all) => all.findIndex((first) => first.toLowerCase() === email.toLowerCase()) === i);
    super("forbidden", "recipient_not_allowed", "Recipient not allowed for this key", `This API key may send only to addresses at ${allowed.join(", ")} (restrictions.recipient_domains); refused: ${addresses.join(", ")}.`, {
      errors: refused.map((r) => ({ location: "body" as const, pointer: r.pointer, message: `${r.email} is not at a domain this key may send to` })),
    });
  }
}

/** A member's role is below the least role the operation names (x-mailroom-role). */
export class InsufficientRoleError extends DomainError {
  constructor(needed: string, has: string) {
    super("forbidden", "insufficient_role", "Insufficient role", `This operation needs the ${needed} role or above; you are ${has === "admin" ? "an" : "a"} ${has} of this workspace.`);
  }
}

/** Account operations act for a person; an API key belongs to a workspace, not a person. */
export class UserTokenRequiredError extends DomainError {
  constructor() {
    super("forbidden", "user_token_required", "User access token required", "This operation acts for a person: call it with a user access token (mru_…), not an API key.");
  }
}

/** One answer for an unknown address and a wrong password: no account oracle. */
export class InvalidCredentialsError extends DomainError {
  constructor() {
    super("unauthenticated", "invalid_credentials", "Invalid email or password", "The email address or the password is not correct.");
  }
}

export class NotSignedInError extends DomainError {
  constructor() {
    super("unauthenticated", "not_signed_in", "Not signed in", "Sign in first: the session is missing or has expired.");
  }
}

export class TooManyAttemptsError extends DomainError {
  constructor(retryAfterSeconds: number) {
    super("rate_limited", "too_many_attempts", "Too many attempts", `Too many attempts to sign in, sign up or change a password, for this address or from this client; try again in ${Math.ceil(retryAfterSeconds / 60)} min.`, { retryAfterSeconds });
  }
}

export class RateLimitedError extends DomainError {
  constructor(retryAfterSeconds: number) {
    super("rate_limited", "rate_limited", "Too many requests", `This key's request quota is spent; retry in ${retryAfterSeconds} s.`, { retryAfterSeconds });
  }
}

/** The workspace's monthly quota of live messages (Workspace.monthly_quota) is spent. */
export class QuotaExceededError extends DomainError {
  constructor(
    readonly quota: number,
    readonly used: number,
    readonly requested: number,
    resetsAt: string,
    retryAfterSeconds: number,
  ) {
    super(
      "rate_limited",
      "monthly_quota_exceeded",
      "Monthly quota exceeded",
      `This workspace's monthly quota is ${quota} live messages; ${used} were accepted this month (UTC) and this request adds ${requested}. ` +
        `It resets at ${resetsAt}. To send more now, raise or remove the quota: PATCH /v1/workspace with {"monthly_quota": <a larger number or null>}.`,
      { retryAfterSeconds },
    );
  }
}

export class UnavailableError extends DomainError {
  constructor(message: string, retryAfterSeconds = 1) {
    super("unavailable", "service_unavailable", "Service unavailable", message, { retryAfterSeconds });
  }
}

/** A database constraint that the domain expects and handles, named by the repository (src/db/driver-errors.ts isUniqueViolation). */
export class UniqueViolation extends Error {
  constructor(readonly constraint: string) {
    super(`unique constraint ${constraint} violated`);
    this.name = "UniqueViolation";
  }
}
