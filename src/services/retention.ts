import { DAY_MS, type Clock } from "../domain/clock.js";
import type { InboundRepository } from "../db/repositories/inbound.js";
import type { MessagesRepository } from "../db/repositories/messages.js";
import type { WorkspacesRepository } from "../db/repositories/workspaces.js";
import { removeInBatches } from "./in-batches.js";


/** How many messages (or replies) one removal write covers: small, so SQLite's single writer is never held long. */
const BATCH = 200;

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
   * Removes the content that every workspace's retention has run out on: settled messages' (by
   * their creation) and inbound replies' (by their receipt). Answers how many of each lost theirs.
   */
  async removeExpiredContent(): Promise<{ messages: number; replies: number }> {
    const now = this.clock.now();
    const removed = { messages: 0, replies: 0 };
    for (const { id, days } of await this.workspaces.withContentRetention()) {
      const before = now - days * DAY_MS;
      removed.messages += await removeInBatches((limit) => this.messages.removeContent(id, before, now, limit), BATCH);
      removed.replies += await removeInBatches((limit) => this.inbound.removeContent(id, before, now, limit), BATCH);
    }
    return removed;
  }
}
