import type { Knex } from "knex";
import { toIso } from "../../domain/clock.js";
import type { Environment, Scope } from "../../domain/environments.js";
import type { EventType } from "../../domain/events.js";
import type { MessageStatus } from "../../domain/message-status.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { parseJson, toNumber } from "../rows.js";
import type { components } from "../../../generated/v1.js";

type Event = components["schemas"]["Event"];

export interface EventFilters {
  type?: EventType | undefined;
  /** An addressKey: compared with each recipient's email_search. */
  recipient?: string | undefined;
  createdAfter?: number | undefined;
  createdBefore?: number | undefined;
}

interface EventRow {
  id: string;
  environment: Environment;
  message_id: string;
  recipient: string | null;
  type: EventType;
  sequence: number;
  from_status: MessageStatus | null;
  to_status: MessageStatus | null;
  data: string;
  created_at: number;
  tags: string;
  metadata: string;
  idempotency_key: string | null;
}

/** Events carry the message's tags, metadata and Idempotency-Key, joined at read time. */
const COLUMNS = ["e.id", "e.environment", "e.message_id", "e.recipient", "e.type", "e.sequence", "e.from_status", "e.to_status", "e.data", "e.created_at", "m.tags", "m.metadata", "m.idempotency_key"];

export class EventsRepository {
  constructor(private readonly knex: Knex) {}

  async list(scope: Scope, filters: EventFilters, page: PageRequest): Promise<Page<Event>> {
    const query = this.base(scope);
    if (filters.type) query.andWhere("e.type", filters.type);
    if (filters.recipient !== undefined) this.whereHistoryOf(query, scope, filters.recipient);
    if (filters.createdAfter !== undefined) query.andWhere("e.created_at", ">=", filters.createdAfter);
    if (filters.createdBefore !== undefined) query.andWhere("e.created_at", "<", filters.createdBefore);
    return paginate<EventRow, Event>(query, "e.id", (row) => row.id, page, "desc", toWire);
  }

  /** A message's events in sequence order; the cursor is the sequence number. */
  async listForMessage(scope: Scope, messageId: string, page: PageRequest): Promise<Page<Event>> {
    const query = this.base(scope).andWhere("e.message_id", messageId);
    return paginate<EventRow, Event>(query, "e.sequence", (row) => row.sequence, page, "asc", toWire);
  }

  /** One event of the scope (redelivering it to a webhook endpoint). */
  async find(scope: Scope, id: string): Promise<Event | undefined> {
    const row = (await this.base(scope).andWhere("e.id", id).first()) as EventRow | undefined;
    return row && toWire(row);
  }

  /** Events by id, whatever their tenant: the webhook dispatcher sends them as the API shows them. */
  async findMany(ids: readonly string[]): Promise<Map<string, Event>> {
    const found = new Map<string, Event>();
    for (let i = 0; i < ids.length; i += 200) {
      const rows = (await this.knex("events as e").join("messages as m", "m.id", "e.message_id").select(COLUMNS).whereIn("e.id", ids.slice(i, i + 200))) as EventRow[];
      for (const row of rows) found.set(row.id, toWire(row));
    }
    return found;
  }

  /**
   * The events of mail to `recipient`: those of the messages addressed to it (found through the
   * recipients' search index, so a rare address does not scan the environment's events), less
   * those about the messages' other recipients. An event names its recipient as stored, so the
   * recipient row with that exact address says whether it is this one.
   */
  private whereHistoryOf(query: Knex.QueryBuilder, scope: Scope, recipient: string): void {
    query
      .whereIn("e.message_id", (q) =>
        q.select("r.message_id").from("message_recipients as r").where({ "r.workspace_id": scope.workspaceId, "r.environment": scope.environment, "r.email_search": recipient }),
      )
      .andWhere((about) =>
        about.whereNull("e.recipient").orWhereExists((q) =>
          q.select(this.knex.raw("1")).from("message_recipients as own").whereRaw("own.message_id = e.message_id and own.email = e.recipient").andWhere("own.email_search", recipient),
        ),
      );
  }

  private base(scope: Scope): Knex.QueryBuilder {
    return this.knex("events as e")
      .join("messages as m", "m.id", "e.message_id")
      .select(COLUMNS)
      .where({ "e.workspace_id": scope.workspaceId, "e.environment": scope.environment });
  }
}

function toWire(row: EventRow): Event {
  return {
    id: row.id,
    object: "event",
    type: row.type,
    created_at: toIso(toNumber(row.created_at)),
    environment: row.environment,
    message_id: row.message_id,
    recipient: row.recipient,
    sequence: Number(row.sequence),
    from_status: row.from_status,
    to_status: row.to_status,
    tags: parseJson(row.tags),
    metadata: parseJson(row.metadata),
    idempotency_key: row.idempotency_key,
    data: parseJson(row.data),
  };
}
