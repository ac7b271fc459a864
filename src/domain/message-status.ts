import type { components } from "../../generated/v1.js";

/**
 * The message state machine (DESIGN.md §7). Status is kept per recipient; the message's status
 * is their aggregate. Every change, of a recipient or of a message, goes through `transition`,
 * which refuses anything this table does not list.
 */
export const MESSAGE_STATUSES = [
  "scheduled",
  "queued",
  "sending",
  "delivered",
  "deferred",
  "bounced",
  "failed",
  "suppressed",
  "canceled",
] as const;

export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

// Fails to compile when this list and the contract's MessageStatus enum differ, either way.
type ContractStatus = components["schemas"]["MessageStatus"];
export const _sameStatusesAsContract: [Exclude<ContractStatus, MessageStatus> | Exclude<MessageStatus, ContractStatus>] extends [never] ? true : never = true;

const ALLOWED: Record<MessageStatus, readonly MessageStatus[]> = {
  scheduled: ["queued", "canceled"],
  queued: ["sending", "canceled", "suppressed"],
  sending: ["delivered", "deferred", "bounced", "failed", "suppressed"],
  // A deferred recipient is retried (sending), expires (failed) or is canceled before its retry.
  // The message's aggregate may settle on delivered or bounced when its other recipients had.
  deferred: ["queued", "sending", "failed", "canceled", "delivered", "bounced"],
  // A late bounce (an asynchronous DSN after the remote MX said 250) is legal.
  delivered: ["bounced"],
  bounced: [],
  failed: [],
  suppressed: [],
  canceled: [],
};

export class IllegalTransitionError extends Error {
  constructor(
    readonly from: MessageStatus,
    readonly to: MessageStatus,
  ) {
    super(`illegal status transition ${from} -> ${to}`);
    this.name = "IllegalTransitionError";
  }
}

export function canTransition(from: MessageStatus, to: MessageStatus): boolean {
  return ALLOWED[from].includes(to);
}

/** Returns `to` when the move is legal; throws otherwise (a bug, never a user error). */
export function transition(from: MessageStatus, to: MessageStatus): MessageStatus {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to);
  return to;
}

/**
 * The stages an attempt takes a recipient (or a message) through before its outcome, from the
 * status it is stored with while the attempt runs: the database never holds `sending` (a worker
 * records all of a message's outcomes together, once every hand-off of the attempt is done), and
 * a scheduled message is queued by its first attempt. Null when no attempt starts from `from`.
 */
function attemptStages(from: MessageStatus): readonly MessageStatus[] | null {
  if (from === "scheduled") return ["queued", "sending"];
  if (from === "sending") return [];
  return canTransition(from, "sending") ? ["sending"] : null;
}

/** Whether an attempt from `from` may end in `to`, each of its stages a move of the table. */
export function canSettleAttempt(from: MessageStatus, to: MessageStatus): boolean {
  const stages = attemptStages(from);
  if (stages === null) return false;
  const path = [from, ...stages, to];
  return path.every((status, i) => i === 0 || canTransition(path[i - 1]!, status));
}

/** Returns `to` when an attempt from `from` may end in it (canSettleAttempt); throws otherwise, as transition does. */
export function settleAttempt(from: MessageStatus, to: MessageStatus): MessageStatus {
  const stages = attemptStages(from);
  if (stages === null) throw new IllegalTransitionError(from, to);
  return [...stages, to].reduce(transition, from);
}

/**
 * The message's move to its recipients' new aggregate when one changed outside the worker's
 * commit (a report, a cancel): a move of the table, or else the moves of the attempt that a
 * bounce report proves happened, though the worker that made it has not recorded it (the report
 * overtook its commit, or the worker died). So a queued message whose recipient a DSN bounced
 * settles as bounced when its other recipient is canceled. Throws, as transition does, otherwise.
 */
export function moveAggregate(from: MessageStatus, to: MessageStatus): MessageStatus {
  if (from === to) return to;
  return canTransition(from, to) ? transition(from, to) : settleAttempt(from, to);
}

export const CANCELABLE: readonly MessageStatus[] = ["scheduled", "queued", "deferred"];

export const isTerminal = (status: MessageStatus): boolean => ALLOWED[status].length === 0 || status === "delivered";

/** The statuses a message settles in: nothing will send it again (a late bounce changes only its status). */
export const TERMINAL_STATUSES: readonly MessageStatus[] = MESSAGE_STATUSES.filter(isTerminal);

/**
 * The message's status from its recipients' statuses. While any recipient is in flight the
 * message shows the earliest stage; once all are settled, one delivery makes the message
 * `delivered` (per-recipient detail stays on the recipients), then bounced, failed, canceled
 * and suppressed in that order.
 *
 * Canceled ranks above suppressed: both mean "not sent", and the two meet only when a cancel
 * stops a deferred message whose other recipient was suppressed. The user asked for the cancel
 * and was answered 200, so the message says canceled, as its message.canceled event does (and
 * deferred -> suppressed is no move of the table: the recipients say who was suppressed).
 */
export function aggregateStatus(recipientStatuses: readonly MessageStatus[]): MessageStatus {
  const present = new Set(recipientStatuses);
  const order: MessageStatus[] = ["scheduled", "sending", "queued", "deferred", "delivered", "bounced", "failed", "canceled", "suppressed"];
  for (const status of order) if (present.has(status)) return status;
  throw new Error("a message has at least one recipient");
}
