// Human renderings of the API's objects. JSON output never passes through here.
import type { ApiKey, ApiKeyRestrictions, Event, InboundMessage, Message, MessageBatch, MessagePreview, MessageSummary, MessageTemplate, Problem, Recipient } from "mailroom";
import { cell, fieldAt, fields, table } from "../output.js";

export const messageColumns = {
  headers: ["ID", "STATUS", "TO", "SUBJECT", "CREATED"],
  row: (message: MessageSummary) => [message.id, message.status, cell(message.to), cell(message.subject, 50), message.created_at],
};

export const eventColumns = {
  headers: ["ID", "TYPE", "MESSAGE", "RECIPIENT", "CREATED"],
  row: (event: Event) => [event.id, event.type, event.message_id, event.recipient ?? "", event.created_at],
};

export const apiKeyColumns = {
  headers: ["ID", "NAME", "PERMISSION", "TOKEN", "LAST USED", "STATUS", "RESTRICTIONS"],
  row: (key: ApiKey) => [key.id, cell(key.name, 30), key.permission, key.redacted_key, key.last_used_at ?? "never", apiKeyState(key), cell(restrictionsLine(key.restrictions), 50)],
};

export function renderMessage(message: Message): string {
  const summary = fields([
    ["id", message.id],
    ["status", message.status],
    ["environment", message.environment],
    ["from", message.from],
    ["to", message.to.join(", ")],
    ["cc", message.cc.join(", ")],
    ["subject", message.subject],
    ...templateFields(message.template),
    ["tags", message.tags.join(", ")],
    ["tracking", switchesOn(message.tracking)],
    ["engagement", `${message.engagement.opens} opens, ${message.engagement.clicks} clicks, ${message.engagement.replies} replies`],
    ["scheduled_at", message.scheduled_at],
    ["created_at", message.created_at],
    // Only once the workspace's content retention has removed the bodies and source (docs/retention.md).
    ["content_removed_at", message.content_removed_at],
  ]);
  const recipients = table(
    ["RECIPIENT", "TYPE", "STATUS", "ENGAGEMENT", "DETAIL"],
    message.recipients.map((recipient) => [recipient.email, recipient.type, recipient.status, engagementOf(recipient), recipient.detail ?? ""]),
  );
  return `${summary}\n\n${recipients}`;
}

/** A dry run: what would be sent, who would get it, and its text (the source: --mime or --json). */
export function renderPreview(preview: MessagePreview): string {
  const summary = fields([
    ["environment", preview.environment],
    ["from", preview.from],
    ["to", preview.to.join(", ")],
    ["cc", preview.cc.join(", ")],
    ["subject", preview.subject],
    ...templateFields(preview.template),
    ["tracking", switchesOn(preview.tracking)],
    ["scheduled_at", preview.scheduled_at],
    ["size", `${preview.size_bytes} bytes`],
  ]);
  const recipients = table(
    ["RECIPIENT", "TYPE", "WOULD"],
    preview.recipients.map((r) => [r.email, r.type, r.suppression ? `be skipped: suppressed (${r.suppression.reason})` : r.simulated_outcome ? `be simulated: ${r.simulated_outcome}` : "be sent"]),
  );
  return `${summary}\n\n${recipients}${preview.text === null ? "" : `\n\n${preview.text}`}`;
}

/** A template's (or a layout's) version as it is addressed: `welcome@3`. */
export const versionRef = ({ slug, version }: { slug: string; version: number }) => `${slug}@${version}`;

/** The template a message was rendered from and the layout it was sent in, as fields (none: no lines). */
function templateFields(template: MessageTemplate | null): Array<[string, string | undefined]> {
  return [
    ["template", template ? versionRef(template) : undefined],
    ["layout", template?.layout ? versionRef(template.layout) : undefined],
  ];
}

/** The names of the switches that are on (`opens, clicks`), or `none`: tracking settings. */
export function switchesOn(switches: Record<string, boolean>): string {
  return (
    Object.entries(switches)
      .filter(([, value]) => value)
      .map(([name]) => name)
      .join(", ") || "none"
  );
}

/** What a recipient did, first time each (`opened, clicked`), or empty. */
function engagementOf(recipient: Recipient): string {
  const stamps: Array<[string, string | null]> = [
    ["opened", recipient.opened_at],
    ["clicked", recipient.clicked_at],
    ["replied", recipient.replied_at],
    ["complained", recipient.complained_at],
    ["unsubscribed", recipient.unsubscribed_at],
  ];
  return stamps
    .filter(([, at]) => at !== null)
    .map(([name]) => name)
    .join(", ");
}

export const replyColumns = {
  headers: ["ID", "FROM", "SUBJECT", "DMARC", "RECEIVED"],
  row: (reply: InboundMessage) => [reply.id, cell(reply.from), cell(reply.subject, 50), reply.authentication.dmarc, reply.received_at],
};

/** A reply's attachments that can still be downloaded: none once the content retention removed them. */
const downloadable = (inbound: InboundMessage) => (inbound.content_removed_at === null ? inbound.attachments : []);

/** A reply as people read mail: its fields, the new text, the quoted history set apart, and the attachments. */
export function renderInbound(inbound: InboundMessage): string {
  const summary = fields([
    ["id", inbound.id],
    ["message_id", inbound.message_id],
    ["recipient", inbound.recipient],
    ["from", inbound.from],
    ["to", inbound.to.join(", ")],
    ["subject", inbound.subject],
    ["authentication", `spf ${inbound.authentication.spf}, dkim ${inbound.authentication.dkim}, dmarc ${inbound.authentication.dmarc}`],
    ["threaded_by", inbound.threaded_by],
    ["simulated", inbound.simulated ? "yes" : undefined],
    ["received_at", inbound.received_at],
    ["content_removed_at", inbound.content_removed_at],
  ]);
  const body = inbound.content_removed_at !== null ? "(content removed by the workspace's content retention)" : (inbound.text ?? (inbound.html ? "(HTML only: see --json)" : "(no text)"));
  const parts = [summary, body];
  if (inbound.quoted_text) parts.push(`Quoted history:\n${inbound.quoted_text.replace(/^/gm, "  ")}`);
  const attachments = downloadable(inbound);
  if (attachments.length > 0) {
    const rows = attachments.map((attachment) => [String(attachment.index), attachment.filename ?? "(unnamed)", attachment.content_type, String(attachment.size)]);
    parts.push(table(["INDEX", "FILENAME", "TYPE", "BYTES"], rows));
  }
  return parts.join("\n\n");
}

/** The hint after a reply with attachments: the command that downloads one. */
export const downloadHint = (inbound: InboundMessage) =>
  downloadable(inbound).length > 0 ? `Download an attachment with: mailroom inbound get-attachment ${inbound.id} <index> --output <file>` : undefined;

/** One line per message of a batch (its id, or why it was refused), then the count of each. */
export function renderBatch(batch: MessageBatch): string {
  const rows = batch.data.map((item) => [String(item.index), String(item.status), item.message?.id ?? "", item.error ? describeProblem(item.error) : ""]);
  const accepted = batch.data.filter((item) => item.status === 202).length;
  return `${table(["INDEX", "STATUS", "ID", "ERROR"], rows)}\n\n${accepted} accepted, ${batch.data.length - accepted} refused.`;
}

/** A problem on one line: its code, then each failing field (pointers relative to the batch's item) or the detail. */
export function describeProblem(problem: Problem): string {
  const fieldErrors = (problem.errors ?? []).map((field) => `${fieldAt(field)} ${field.message}`);
  return `${problem.code}: ${fieldErrors.length > 0 ? fieldErrors.join("; ") : (problem.detail ?? problem.title)}`;
}

export function renderEventLine(event: Event): string {
  const transition = event.from_status || event.to_status ? `  ${event.from_status ?? "∅"} → ${event.to_status ?? "∅"}` : "";
  return `${event.created_at}  ${event.type.padEnd(20)}  ${event.message_id}  ${event.recipient ?? "(message)"}${transition}`;
}

export function renderApiKey(key: ApiKey & { secret?: string; previous_secret_expires_at?: string | null }): string {
  const details = fields([
    ["id", key.id],
    ["name", key.name],
    ["environment", key.environment],
    ["permission", key.permission],
    ["restrictions", restrictionsLine(key.restrictions)],
    ["status", apiKeyState(key)],
    ["expires_at", key.expires_at],
    ["last_used_at", key.last_used_at ?? "never"],
    ["last_used_ip", key.last_used_ip],
    ["created_at", key.created_at],
    ["created_by", key.created_by && `${key.created_by.type} ${key.created_by.id}`],
    ["previous_secret_expires_at", key.previous_secret_expires_at],
  ]);
  return key.secret ? `${details}\n\nsecret  ${key.secret}` : details;
}

/** The hint after an answer that holds a key's secret (create, rotate): it is not shown again. */
export const apiKeySecretHint = (key: ApiKey & { secret?: string }) => (key.secret ? "The secret is shown only now: store it somewhere safe." : undefined);

/**
 * A key's limits on one line (`ips 203.0.113.0/24 · from acme.example · to anywhere`), or
 * undefined for a key without any, which is then shown without the line.
 */
function restrictionsLine({ allowed_ips, sender_domains, recipient_domains }: ApiKeyRestrictions): string | undefined {
  if (allowed_ips === null && sender_domains === null && recipient_domains === null) return undefined;
  const listed = (values: string[] | null, otherwise: string) => values?.join(", ") ?? otherwise;
  return `ips ${listed(allowed_ips, "any")} · from ${listed(sender_domains, "anywhere")} · to ${listed(recipient_domains, "anywhere")}`;
}

function apiKeyState(key: ApiKey): string {
  if (key.revoked_at) return "revoked";
  if (key.expires_at && Date.parse(key.expires_at) <= Date.now()) return "expired";
  return "active";
}
