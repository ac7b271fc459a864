import { describe, expect, it } from "vitest";
import { AUDITED_OPERATIONS } from "../../src/domain/audit.js";
import { operationsOf } from "../../src/http/bindings.js";
import { loadSpec } from "../../src/http/spec.js";

/**
 * Every operation that changes something is a decision for the audit log (docs/audit-log.md):
 * recorded, or named here with the reason it is not. A new operation fails this test until
 * someone decides.
 */
const NOT_AUDITED: Record<string, string> = {
  createMessage: "a message has its own events",
  createMessageBatch: "a message has its own events",
  previewMessage: "changes nothing",
  cancelMessage: "a message.canceled event records it",
  rescheduleMessage: "a message.scheduled event records it",
  verifyDomain: "a check, not a change; the domain's status and webhooks record its outcome",
  createSuppression: "the suppression list records its own entries, with their reason",
  createSuppressionBatch: "the suppression list records its own entries, with their reason",
  deleteSuppression: "the suppression list's data, not configuration",
  renderTemplate: "changes nothing",
  testWebhook: "sends a sample event; its attempt is recorded",
  redeliverWebhookEvent: "delivery work; its attempts are recorded",
  replayWebhookEvents: "delivery work; its attempts are recorded",
  updateAccount: "the caller's own display name, no workspace's setting: each workspace's members list shows it",
  createWorkspace: "creates a new workspace, whose log then starts; its created_at records it",
};

describe("the audit log's coverage", () => {
  const operations = operationsOf(loadSpec());
  const ids = new Set(operations.map((op) => op.operationId));

  it("records only operations the contract has", () => {
    for (const operationId of [...Object.keys(AUDITED_OPERATIONS), ...Object.keys(NOT_AUDITED)]) expect(ids, operationId).toContain(operationId);
  });

  it("decides, for every operation that changes something, whether it is recorded", () => {
    const changing = operations.filter((op) => op.method !== "get" && op.operationId !== "listAuditEvents").map((op) => op.operationId);
    const undecided = changing.filter((id) => !(id in AUDITED_OPERATIONS) && !(id in NOT_AUDITED));
    expect(undecided).toEqual([]);
    for (const id of Object.keys(AUDITED_OPERATIONS)) expect(Object.keys(NOT_AUDITED)).not.toContain(id);
  });
});
