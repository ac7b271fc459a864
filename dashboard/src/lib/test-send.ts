import { APIError, type CreateMessageParams, type MessagePreviewRecipient } from "mailroom";
// With their extension: the unit tests compile this module under the root tsconfig (NodeNext),
// which needs it; Vite and the dashboard's tsconfig (Bundler) accept it too.
import type { Environment } from "./environment.js";
import { isAtOrBelow } from "./forms.js";
import { formatDate } from "./format.js";
import { reasonLabel } from "./suppressions.js";
import { parseVariableValues, VariableInputError } from "./templates.js";

/** The template page's "Send a test" form, as typed. */
export interface TestSendForm {
  to: string;
  /** Empty: the workspace's default sender. */
  from: string;
  /** The variables as JSON. */
  variablesText: string;
}

/**
 * The body that previewMessage checks and createMessage sends: the template by slug alone, so
 * that it is its published version that goes out, as it would from code. Variables that are not a
 * JSON object are refused here, at the pointer the server would use.
 */
export function testSendBody(slug: string, form: TestSendForm): CreateMessageParams {
  const from = form.from.trim();
  return {
    to: form.to.trim(),
    ...(from ? { from } : {}),
    template: { slug, variables: parseVariableValues(form.variablesText, "/template/variables", "The variables") },
  };
}

/** Where the form shows a problem: beside one of its fields, or beside the template it sends. */
export type TestSendField = "to" | "from" | "variables" | "template";

// Longest prefix first: "/template/variables" before "/template".
const FIELD_POINTERS: ReadonlyArray<[string, TestSendField]> = [
  ["/to", "to"],
  ["/from", "from"],
  ["/template/variables", "variables"],
  ["/template", "template"],
];

/** The form's field a problem pointer is about ("/template/variables/first_name": variables), or null. */
export function fieldOf(pointer: string): TestSendField | null {
  return FIELD_POINTERS.find(([prefix]) => isAtOrBelow(pointer, prefix))?.[1] ?? null;
}

/**
 * What a refusal says about one field, to show beside it: the problems of a 422 at its pointers,
 * or the variables that could not be read. A variable's problem is led by its name ("first_name
 * is required"), which the pointer holds (RFC 6901 escapes undone) and the message does not.
 */
export function problemsAt(error: unknown, field: TestSendField): string[] {
  if (error instanceof VariableInputError) return fieldOf(error.pointer) === field ? [error.message] : [];
  if (!(error instanceof APIError) || error.status !== 422) return [];
  return error.errors.flatMap(({ pointer, message }) => {
    if (fieldOf(pointer) !== field) return [];
    const variable = field === "variables" ? pointer.slice("/template/variables/".length).split("/")[0] : "";
    return [variable ? `${variable.replace(/~1/g, "/").replace(/~0/g, "~")} ${message}` : message];
  });
}

/**
 * The fields a refusal is about: each problem's field, or null for one beside none of them (and
 * for a failure that is no problem at a pointer: no answer, a 5xx).
 */
export function problemFields(error: unknown): Array<TestSendField | null> {
  if (error instanceof VariableInputError) return [fieldOf(error.pointer)];
  if (!(error instanceof APIError) || error.status !== 422 || error.errors.length === 0) return [null];
  return error.errors.map(({ pointer }) => fieldOf(pointer));
}

type SimulatedOutcome = NonNullable<MessagePreviewRecipient["simulated_outcome"]>;

// What the sandbox simulator would do (docs/sandbox.md), finishing "The simulator would …".
const SIMULATED_OUTCOMES: Record<SimulatedOutcome, string> = {
  delivered: "deliver it",
  bounced: "bounce it (a hard bounce)",
  soft_bounced: "bounce it (a soft bounce: mailbox full)",
  deferred: "defer it once, then deliver it",
  opened: "deliver it, then open it",
  clicked: "deliver it, open it, then click its first link",
  replied: "deliver it, open it, then reply",
  complained: "deliver it, open it, then report it as spam",
  unsubscribed: "deliver it, open it, then unsubscribe",
};

/** What would happen to a recipient, in words: skipped, simulated, or a real mailbox. */
export interface RecipientOutlook {
  /** `suppressed` is a warning; the others are marked with their environment's badge. */
  kind: "suppressed" | Environment;
  text: string;
}

export function recipientOutlook(recipient: Pick<MessagePreviewRecipient, "suppression" | "simulated_outcome">, environment: Environment): RecipientOutlook {
  const { suppression, simulated_outcome: outcome } = recipient;
  if (suppression) {
    return {
      kind: "suppressed",
      text: `Suppressed (${reasonLabel(suppression.reason)}, since ${formatDate(suppression.created_at)}): it would be skipped and get nothing. Remove the address from the suppression list to send to it.`,
    };
  }
  if (environment === "live") return { kind: "live", text: "Will be delivered to a real mailbox." };
  return { kind: "sandbox", text: `The simulator would ${SIMULATED_OUTCOMES[outcome ?? "delivered"]}; nothing leaves Mailroom.` };
}
