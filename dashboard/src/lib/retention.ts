import type { RequestBody } from "mailroom";

/**
 * What a message keeps once the workspace's content retention has removed its content
 * (docs/retention.md): the settings form says it before anyone turns retention on, and a message
 * without its content says it again.
 */
export const KEPT_AFTER_REMOVAL = "the subject, addresses, headers, tags, metadata, attachments' names and sizes, statuses and events";

/**
 * Whether saving `next` days over `current` removes content that would otherwise have been kept:
 * turning retention on, or shortening it. Both take effect at the next maintenance round, within
 * minutes, and cannot be undone, so the form asks first. Lengthening it or turning it off loses
 * nothing.
 */
export function shortensRetention(current: number | null, next: number | null): boolean {
  return next !== null && (current === null || next < current);
}

/**
 * Whether saving `changes` (the fields a form changed: see changedFields) shortens the retention
 * the workspace has now, `current` (read again when the form is saved, not as it was loaded). A
 * form that leaves the field as loaded does not send it, so it cannot shorten a retention someone
 * lengthened meanwhile, and is not asked about.
 */
export function changeShortensRetention(current: number | null, changes: RequestBody<"updateWorkspace">): boolean {
  return changes.content_retention_days !== undefined && shortensRetention(current, changes.content_retention_days);
}
