import type { AuditEvent } from "mailroom";
import { describe, expect, it } from "vitest";
import { AUDITED_OPERATIONS, describeAuditEvent, operationLabel, targetHref } from "../../dashboard/src/lib/audit-log.js";
import { AUDITED_ACCOUNT_CHANGES, AUDITED_OPERATIONS as RECORDED } from "../../src/domain/audit.js";

/**
 * The audit log page's words (dashboard/src/lib/audit-log.ts): what each change is called, who
 * made it and where its target can be seen. The page itself is checked in the browser
 * (test/e2e/audit-log.test.ts).
 */
type Described = Pick<AuditEvent, "operation" | "actor" | "target" | "fields">;

const EMAILS = new Map([["usr_ada", "ada@acme.example"]]);
const event = (overrides: Partial<Described>): Described => ({
  operation: "updateApiKey",
  actor: { type: "user", id: "usr_ada" },
  target: { type: "api_key", id: "key_1" },
  fields: [],
  ...overrides,
});

describe("AUDITED_OPERATIONS", () => {
  it("offers exactly the changes the server records, each once: the operations and joining by invitation", () => {
    expect([...AUDITED_OPERATIONS].sort()).toEqual([...Object.keys(RECORDED), ...Object.keys(AUDITED_ACCOUNT_CHANGES)].sort());
  });
});

describe("operationLabel", () => {
  it("says what happened, in the past tense, with the noun in words", () => {
    expect(operationLabel("updateApiKey")).toBe("Updated API key");
    expect(operationLabel("createWebhook")).toBe("Created webhook");
    expect(operationLabel("rotateWebhookSecret")).toBe("Rotated webhook secret");
    expect(operationLabel("removeMember")).toBe("Removed member");
    expect(operationLabel("revokeInvitation")).toBe("Revoked invitation");
    expect(operationLabel("publishTemplate")).toBe("Published template");
  });

  it("says what a reveal and the changes to a part of something are", () => {
    expect(operationLabel("getWebhookSecret")).toBe("Revealed webhook signing secret");
    expect(operationLabel("rotateDomainDkim")).toBe("Rotated domain DKIM keys");
    expect(operationLabel("updateWorkspace")).toBe("Updated workspace settings");
  });

  it("says a member left, whose leaving is a removal of themselves", () => {
    expect(operationLabel("leaveWorkspace")).toBe("Left workspace");
  });

  it("says a person joined through an invitation, in the past tense as every other change", () => {
    expect(operationLabel("acceptInvitation")).toBe("Joined by invitation");
  });

  it("reads an operation it does not know as its words", () => {
    expect(operationLabel("verifyDomain")).toBe("Verify domain");
  });

  it("has a distinct label for every recorded operation, so the filter's choices can be told apart", () => {
    const labels = AUDITED_OPERATIONS.map(operationLabel);
    expect(new Set(labels).size).toBe(labels.length);
  });
});

describe("describeAuditEvent", () => {
  it("names a member by their address when the members list has it, else by their id", () => {
    expect(describeAuditEvent(event({}), EMAILS).actor).toEqual({ kind: "Member", name: "ada@acme.example" });
    expect(describeAuditEvent(event({ actor: { type: "user", id: "usr_gone" } }), EMAILS).actor).toEqual({ kind: "Member", name: "usr_gone" });
  });

  it("names an API key by its id", () => {
    expect(describeAuditEvent(event({ actor: { type: "api_key", id: "key_9" } }), EMAILS).actor).toEqual({ kind: "API key", name: "key_9" });
  });

  it("lists the fields the request gave", () => {
    expect(describeAuditEvent(event({ fields: ["name", "restrictions"] }), EMAILS).fields).toBe("name, restrictions");
    expect(describeAuditEvent(event({ fields: [] }), EMAILS).fields).toBe("");
  });

  it("names a member who is the target by their address too, and a target without an id by its kind alone", () => {
    expect(describeAuditEvent(event({ operation: "updateMember", target: { type: "member", id: "usr_ada" } }), EMAILS).target).toEqual({
      kind: "Member",
      name: "ada@acme.example",
      href: "/settings",
    });
    expect(describeAuditEvent(event({ operation: "updateWorkspace", target: { type: "workspace", id: null } }), EMAILS).target).toEqual({
      kind: "Workspace",
      name: null,
      href: "/settings",
    });
  });
});

describe("targetHref", () => {
  it("links a domain, a webhook endpoint and a template to their pages (a template by its id)", () => {
    expect(targetHref({ operation: "updateDomain", target: { type: "domain", id: "dom_1" } })).toBe("/domains/dom_1");
    expect(targetHref({ operation: "updateWebhook", target: { type: "webhook", id: "wh_1" } })).toBe("/webhooks/wh_1");
    expect(targetHref({ operation: "publishTemplate", target: { type: "template", id: "tpl_1" } })).toBe("/templates/tpl_1");
  });

  it("links what has no page of its own to the list it is in", () => {
    expect(targetHref({ operation: "revokeApiKey", target: { type: "api_key", id: "key_1" } })).toBe("/developers/api-keys");
    expect(targetHref({ operation: "createInvitation", target: { type: "invitation", id: "inv_1" } })).toBe("/settings");
  });

  it("does not link to the page of something the change deleted", () => {
    expect(targetHref({ operation: "deleteDomain", target: { type: "domain", id: "dom_1" } })).toBeNull();
    expect(targetHref({ operation: "deleteTemplate", target: { type: "template", id: "tpl_1" } })).toBeNull();
  });

  it("does not link a kind it does not know", () => {
    expect(targetHref({ operation: "updateSomething", target: { type: "something", id: "x_1" } })).toBeNull();
  });
});
