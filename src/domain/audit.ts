/**
 * Which operations the audit log records (docs/audit-log.md), and what each changes. `reach`
 * says whose log shows it: a change to what only the caller's environment has (its keys, its
 * webhook endpoints) appears in that environment's log; a change to what both environments
 * share (settings, domains, templates, members) appears in both, so neither log misses a change
 * that affects it. Messages and suppressions are left out: their events and lists record them.
 */
export const AUDITED_OPERATIONS = {
  createApiKey: { target: "api_key", reach: "environment" },
  updateApiKey: { target: "api_key", reach: "environment" },
  rotateApiKey: { target: "api_key", reach: "environment" },
  revokeApiKey: { target: "api_key", reach: "environment" },
  createWebhook: { target: "webhook", reach: "environment" },
  updateWebhook: { target: "webhook", reach: "environment" },
  deleteWebhook: { target: "webhook", reach: "environment" },
  rotateWebhookSecret: { target: "webhook", reach: "environment" },
  // Reading the secret is recorded: whoever saw it can sign deliveries.
  getWebhookSecret: { target: "webhook", reach: "environment" },
  updateWorkspace: { target: "workspace", reach: "workspace" },
  createDomain: { target: "domain", reach: "workspace" },
  updateDomain: { target: "domain", reach: "workspace" },
  deleteDomain: { target: "domain", reach: "workspace" },
  rotateDomainDkim: { target: "domain", reach: "workspace" },
  createTemplate: { target: "template", reach: "workspace" },
  updateTemplate: { target: "template", reach: "workspace" },
  publishTemplate: { target: "template", reach: "workspace" },
  deleteTemplate: { target: "template", reach: "workspace" },
  updateMember: { target: "member", reach: "workspace" },
  removeMember: { target: "member", reach: "workspace" },
  // Leaving is a removal of oneself: the log shows who went, as it shows who was removed.
  leaveWorkspace: { target: "member", reach: "workspace" },
  createInvitation: { target: "invitation", reach: "workspace" },
  revokeInvitation: { target: "invitation", reach: "workspace" },
} as const satisfies Record<string, { target: string; reach: "environment" | "workspace" }>;

/**
 * Changes made outside /v1 that the log records too. Joining a workspace through an invitation
 * happens on the dashboard's /auth routes (sign-up with the link, or accepting it signed in), yet
 * it is what gives a person a role in the workspace: the log would otherwise show a member
 * appear from nowhere. Named like an operation, though no /v1 operation has the name.
 */
export const AUDITED_ACCOUNT_CHANGES = {
  acceptInvitation: { target: "member", reach: "workspace" },
} as const satisfies Record<string, { target: string; reach: "environment" | "workspace" }>;

export type AuditedOperation = keyof typeof AUDITED_OPERATIONS | keyof typeof AUDITED_ACCOUNT_CHANGES;

/** What an audited change targets, and whose logs show it. */
export const auditedChange = (operation: AuditedOperation): { target: string; reach: "environment" | "workspace" } =>
  operation in AUDITED_OPERATIONS ? AUDITED_OPERATIONS[operation as keyof typeof AUDITED_OPERATIONS] : AUDITED_ACCOUNT_CHANGES[operation as keyof typeof AUDITED_ACCOUNT_CHANGES];

export function isAudited(operationId: string): operationId is keyof typeof AUDITED_OPERATIONS {
  return Object.hasOwn(AUDITED_OPERATIONS, operationId);
}
