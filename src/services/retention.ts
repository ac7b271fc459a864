import { DAY_MS, type Clock } from "../domain/clock.js";
import type { InboundRepository } from "../db/repositories/inbound.js";
import type { MessagesRepository } from "../db/repositories/messages.js";
import type { WorkspacesRepository } from "../db/repositories/workspaces.js";

/**
 * What one removal write covers: at most this many messages (or replies), and for messages at
 * most this many characters of stored attachments loaded (base64 JSON; one larger message goes
 * alone). Small, so SQLite's single writer is never held long, and so a worker's heap holds
 * about twice the bytes at most, whatever the messages carry (docs/retention.md).
 */
export const REMOVAL_BATCH = { messages: 200, attachmentBytes: 8 * 1024 * 1024 };

/**
 * How long one maintenance round spends removing content before it leaves the rest to the next
 * round (5 minutes later): a workspace that just set a short retention may have a backlog of
 * millions, and the round's other steps, on every worker, should not wait behind it.
 */
export const ROUND_BUDGET_MS = 10_000;

/**
 * Content retention (docs/retention.md): a workspace that sets `content_retention_days` keeps a
 * settled message's bodies, source and attachment bytes that long, then only what it needs to
 * account for the message (addresses, subject, statuses, events); and a reply's text, HTML and
 * attachment bytes that long after it arrived. Run by the maintenance round.
 */
export class RetentionService {
  constructor(
    private readonly workspaces: WorkspacesRepository,
    private readonly messages: MessagesRepository,
    private readonly inbound: InboundRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The workspace the last round that ran out of time stopped at: the next round starts after it,
   * so that with more workspaces than one round gets through, the later ones still get their turn.
   * A hint for this process alone (another worker keeps its own); null once a round finished.
   */
  private stoppedAt: string | null = null;

  /**
   * Removes the content that every workspace's retention has run out on: settled messages' (by
   * their creation) and inbound replies' (by their receipt). A batch at a time, the workspaces
   * in turn (so one with a large backlog does not hold up the others), until nothing is left or
   * `budgetMs` has passed; at least one batch either way. Answers how many messages and replies
   * lost theirs, and whether it `finished` (otherwise the next round goes on from there).
   */
  async removeExpiredContent({ budgetMs = ROUND_BUDGET_MS }: { budgetMs?: number } = {}): Promise<{ messages: number; replies: number; finished: boolean }> {
    // Elapsed time, not the (injectable) clock the data is dated by.
    const started = performance.now();
    const outOfTime = () => performance.now() - started >= budgetMs;
    const now = this.clock.now();
    const removed = { messages: 0, replies: 0 };
    const workspaces = (await this.workspaces.withContentRetention()).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const first = Math.max(0, this.stoppedAt === null ? 0 : workspaces.findIndex((w) => w.id > this.stoppedAt!));
    let pending = [...workspaces.slice(first), ...workspaces.slice(0, first)].map(({ id, days }) => ({ id, before: now - days * DAY_MS, messages: true, replies: true }));
    this.stoppedAt = null;
    while (pending.length > 0 && this.stoppedAt === null) {
      for (const workspace of pending) {
        if (workspace.messages) {
          const batch = await this.messages.removeContent(workspace.id, workspace.before, now, REMOVAL_BATCH);
          removed.messages += batch.removed;
          workspace.messages = batch.more;
        } else {
          const replies = await this.inbound.removeContent(workspace.id, workspace.before, now, REMOVAL_BATCH.messages);
          removed.replies += replies;
          workspace.replies = replies === REMOVAL_BATCH.messages;
        }
        if (outOfTime()) {
          this.stoppedAt = workspace.id;
          break;
        }
      }
      pending = pending.filter((workspace) => workspace.messages || workspace.replies);
    }
    if (pending.length === 0) this.stoppedAt = null;
    return { ...removed, finished: pending.length === 0 };
  }
}
