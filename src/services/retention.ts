import type { Clock } from "../domain/clock.js";
import type { MessagesRepository } from "../db/repositories/messages.js";
import type { WorkspacesRepository } from "../db/repositories/workspaces.js";

const DAY_MS = 24 * 3600 * 1000;

/** How many messages one removal write covers: small, so SQLite's single writer is never held long. */
const BATCH = 200;

/**
 * Content retention (docs/retention.md): a workspace that sets `content_retention_days` keeps a
 * settled message's bodies, source and attachment bytes that long, then only what it needs to
 * account for the message (addresses, subject, statuses, events). Run by the maintenance round.
 */
export class RetentionService {
  constructor(
    private readonly workspaces: WorkspacesRepository,
    private readonly messages: MessagesRepository,
    private readonly clock: Clock,
  ) {}

  /** Removes the content that every workspace's retention has run out on; answers how many messages lost theirs. */
  async removeExpiredContent(): Promise<number> {
    const now = this.clock.now();
    let removed = 0;
    for (const { id, days } of await this.workspaces.withContentRetention()) {
      for (;;) {
        const count = await this.messages.removeContent(id, now - days * DAY_MS, now, BATCH);
        removed += count;
        if (count < BATCH) break;
      }
    }
    return removed;
  }
}
