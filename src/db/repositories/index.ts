import type { Database } from "../connection.js";
import { GroupCommit } from "../group-commit.js";
import { ApiKeysRepository } from "./api-keys.js";
import { EventsRepository } from "./events.js";
import { IdempotencyRepository } from "./idempotency.js";
import { JobsRepository } from "./jobs.js";
import { MessagesRepository } from "./messages.js";
import { RateLimitsRepository } from "./rate-limits.js";
import { WorkspacesRepository } from "./workspaces.js";

export interface Repositories {
  workspaces: WorkspacesRepository;
  apiKeys: ApiKeysRepository;
  messages: MessagesRepository;
  events: EventsRepository;
  jobs: JobsRepository;
  idempotency: IdempotencyRepository;
  rateLimits: RateLimitsRepository;
  groupCommit: GroupCommit;
  /** Whether the database answers (readiness). */
  ping(): Promise<void>;
}

export function createRepositories(db: Database): Repositories {
  return {
    workspaces: new WorkspacesRepository(db.knex),
    apiKeys: new ApiKeysRepository(db.knex),
    messages: new MessagesRepository(db.knex),
    events: new EventsRepository(db.knex),
    jobs: new JobsRepository(db.knex, db.dialect),
    idempotency: new IdempotencyRepository(db.knex),
    rateLimits: new RateLimitsRepository(db.knex, db.dialect),
    groupCommit: new GroupCommit(db.knex, db.dialect),
    ping: async () => {
      await db.knex.raw("select 1");
    },
  };
}
