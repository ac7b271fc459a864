/**
 * What a message keeps once the workspace's content retention has removed its content
 * (docs/retention.md): the settings form says it before anyone turns retention on, and a message
 * without its content says it again.
 */
export const KEPT_AFTER_REMOVAL = "the subject, addresses, headers, tags, metadata, attachments' names and sizes, statuses and events";
