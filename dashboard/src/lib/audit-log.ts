import type { AuditEvent } from "mailroom";
import { describeActor, type KeyNames, type MemberEmails } from "./actors.js";

/**
 * The operations the audit log records, grouped by what they change, as the page's filter offers
 * them. The contract leaves `operation` an open string (any operationId, and `acceptInvitation`
 * for joining through an invitation, which happens outside /v1); the server's lists are in
 * src/domain/audit.ts, and test/unit/dashboard-audit-log.test.ts holds this one to them.
 */
export const AUDITED_OPERATIONS = [
  "createApiKey",
  "updateApiKey",
  "rotateApiKey",
  "revokeApiKey",
  "createWebhook",
  "updateWebhook",
  "deleteWebhook",
  "rotateWebhookSecret",
  "getWebhookSecret",
  "createDomain",
  "updateDomain",
  "rotateDomainDkim",
  "deleteDomain",
  "createTemplate",
  "updateTemplate",
  "publishTemplate",
  "deleteTemplate",
  "updateWorkspace",
  "updateMember",
  "removeMember",
  "leaveWorkspace",
  "createInvitation",
  "revokeInvitation",
  "acceptInvitation",
] as const;

const PAST_TENSE: Record<string, string> = {
  create: "Created",
  update: "Updated",
  delete: "Deleted",
  rotate: "Rotated",
  revoke: "Revoked",
  publish: "Published",
  remove: "Removed",
};

/** Words of an operationId that are written otherwise than in lower case. */
const SPELLED: Record<string, string> = { api: "API", dkim: "DKIM" };

// Where the verb and the noun alone would mislead: a read, recorded because it hands out a secret,
// and operations that change a part of their noun rather than the whole.
const LABELS: Record<string, string> = {
  getWebhookSecret: "Revealed webhook signing secret",
  rotateDomainDkim: "Rotated domain DKIM keys",
  updateWorkspace: "Updated workspace settings",
  leaveWorkspace: "Left workspace",
  // The person joined: accepting is how, and "Accepted invitation" would read as someone else's act.
  acceptInvitation: "Joined by invitation",
};

/**
 * An operationId as what happened, for people: "updateApiKey" -> "Updated API key". An operation
 * this list does not know (a newer server's) still reads as its words: "verifyDomain" ->
 * "Verify domain".
 */
export function operationLabel(operation: string): string {
  const known = LABELS[operation];
  if (known !== undefined) return known;
  const [verb = "", ...nouns] = operation.split(/(?=[A-Z])/);
  const first = PAST_TENSE[verb] ?? verb.charAt(0).toUpperCase() + verb.slice(1);
  return [first, ...nouns.map((noun) => SPELLED[noun.toLowerCase()] ?? noun.toLowerCase())].join(" ");
}

const TARGET_KINDS: Record<string, string> = {
  api_key: "API key",
  webhook: "Webhook endpoint",
  domain: "Domain",
  template: "Template",
  member: "Member",
  invitation: "Invitation",
  workspace: "Workspace",
};

/** An object's own page, by its kind; getTemplate takes a template's id as well as its slug. */
const PAGES: Record<string, (id: string) => string> = {
  webhook: (id) => `/webhooks/${id}`,
  domain: (id) => `/domains/${id}`,
  template: (id) => `/templates/${id}`,
};

/** Kinds shown in a list rather than on a page of their own. */
const LISTS: Record<string, string> = {
  api_key: "/developers/api-keys",
  member: "/settings",
  invitation: "/settings",
  workspace: "/settings",
};


export interface AuditEventView {
  /** "Updated API key" */
  action: string;
  /** The request's top-level fields, "name, restrictions"; empty when it had none. */
  fields: string;
  /** "Member" or "API key", and who: a member's email or a key's name when known, else the id. */
  actor: { kind: string; name: string };
  /** The kind of object changed, its name (the id, a member's email) and where to see it, if anywhere. */
  target: { kind: string; name: string | null; href: string | null };
}

/** An audit event as the page shows it, with members named by `emails` and keys by `keyNames` where it knows them. */
export function describeAuditEvent(event: Pick<AuditEvent, "operation" | "actor" | "target" | "fields">, emails: MemberEmails, keyNames: KeyNames = new Map()): AuditEventView {
  const { actor, target } = event;
  const memberName = (id: string) => emails.get(id) ?? id;
  return {
    action: operationLabel(event.operation),
    fields: event.fields.join(", "),
    actor: describeActor(actor, emails, keyNames),
    target: {
      kind: TARGET_KINDS[target.type] ?? target.type,
      name: target.id === null ? null : target.type === "member" ? memberName(target.id) : target.id,
      href: targetHref(event),
    },
  };
}

/**
 * Where the changed object can be seen: its own page, or the list it is in. An object the event
 * itself deleted has no page left to link to.
 */
export function targetHref({ operation, target }: Pick<AuditEvent, "operation" | "target">): string | null {
  const page = PAGES[target.type];
  if (page !== undefined) return target.id === null || operation.startsWith("delete") ? null : page(target.id);
  return LISTS[target.type] ?? null;
}
