import type { SuppressionReason } from "mailroom";

/** Every reason, with what it means (the contract's SuppressionReason). */
export const SUPPRESSION_REASONS = [
  { id: "hard_bounce", label: "Hard bounce", hint: "A message to it bounced permanently (recorded by Mailroom)." },
  { id: "complaint", label: "Complaint", hint: "The recipient marked a message as spam." },
  { id: "unsubscribe", label: "Unsubscribe", hint: "The recipient asked to stop receiving mail." },
  { id: "manual", label: "Manual", hint: "Added by hand." },
] as const satisfies readonly { id: SuppressionReason; label: string; hint: string }[];

// Fails to compile when the contract gains a reason this list lacks.
type Missing = Exclude<SuppressionReason, (typeof SUPPRESSION_REASONS)[number]["id"]>;
export const _everyReasonListed: [Missing] extends [never] ? true : never = true;

/** The reasons createSuppression accepts: hard bounces are only recorded by Mailroom itself. */
export const ADDABLE_REASONS = ["manual", "unsubscribe", "complaint"] as const satisfies readonly SuppressionReason[];

export type AddableReason = (typeof ADDABLE_REASONS)[number];

export function isAddableReason(value: string): value is AddableReason {
  return (ADDABLE_REASONS as readonly string[]).includes(value);
}

export function isSuppressionReason(value: string | null): value is SuppressionReason {
  return SUPPRESSION_REASONS.some((reason) => reason.id === value);
}

export function reasonLabel(reason: SuppressionReason): string {
  return SUPPRESSION_REASONS.find((candidate) => candidate.id === reason)?.label ?? reason;
}
