import { addressKey, normaliseAddress } from "../domain/addresses.js";
import type { Clock } from "../domain/clock.js";
import { NotFoundError, UniqueViolation, ValidationError } from "../domain/errors.js";
import type { Principal, Scope } from "../domain/environments.js";
import { newId } from "../domain/ids.js";
import type { Page, PageRequest } from "../db/pagination.js";
import { SuppressionsRepository, type NewSuppression, type SuppressionReason, type SuppressionRow } from "../db/repositories/suppressions.js";
import { scopeOf } from "./api-keys.js";
import type { components } from "../../generated/v1.js";

type Suppression = components["schemas"]["Suppression"];
type CreateSuppressionRequest = components["schemas"]["CreateSuppressionRequest"];
type DeletedObject = components["schemas"]["DeletedObject"];

/** Reasons a client may give; hard bounces are recorded by the delivery worker only. */
const CLIENT_REASONS: ReadonlySet<string> = new Set(["manual", "unsubscribe", "complaint"]);

/** An address as suppressions store it (addressKey), or null when it is not a valid address. */
function suppressionEmail(raw: string): string | null {
  return normaliseAddress(raw.trim()) === null ? null : addressKey(raw);
}

/** One item of createSuppressionBatch: the suppression (new when `created`), or why the item was refused. */
export interface SuppressionBatchOutcome {
  index: number;
  suppression: Suppression | null;
  created: boolean;
  error: ValidationError | null;
}

export interface SuppressionFiltersInput {
  reason?: SuppressionReason | undefined;
  email?: string | undefined;
}

/** The environment's suppression list (DESIGN.md §6: suppressions belong to one environment). */
export class SuppressionsService {
  constructor(
    private readonly suppressions: SuppressionsRepository,
    private readonly clock: Clock,
  ) {}

  async list(principal: Principal, filters: SuppressionFiltersInput, page: PageRequest): Promise<Page<Suppression>> {
    // An unparseable filter matches nothing rather than failing: it is a search, not a write.
    const email = filters.email === undefined ? undefined : addressKey(filters.email);
    return this.suppressions.list(scopeOf(principal), { reason: filters.reason, email }, page);
  }

  /**
   * Suppresses an address. When it already is, the existing suppression is answered unchanged
   * (its reason and date are the useful ones) with `created: false`, so a retry or a second
   * unsubscribe click is not an error.
   */
  async create(principal: Principal, input: CreateSuppressionRequest): Promise<{ suppression: Suppression; created: boolean }> {
    const scope = scopeOf(principal);
    const now = this.clock.now();
    const row: SuppressionRow = { id: newId("suppression", now), ...newSuppression(scope, input, now) };
    const email = row.email;
    const existing = (await this.suppressions.findByEmails(scope, [email])).get(email);
    if (existing) return { suppression: SuppressionsRepository.toWire(existing), created: false };
    try {
      await this.suppressions.insert(row);
    } catch (error) {
      if (!(error instanceof UniqueViolation)) throw error;
      // Suppressed meanwhile (a bounce, a concurrent request): answer that one.
      const winner = (await this.suppressions.findByEmails(scope, [email])).get(email);
      if (!winner) throw error;
      return { suppression: SuppressionsRepository.toWire(winner), created: false };
    }
    return { suppression: SuppressionsRepository.toWire(row), created: true };
  }

  /**
   * Suppresses many addresses at once (createSuppressionBatch), each answered as `create` would:
   * added, already suppressed (an address earlier in the same batch counts as suppressed), or
   * its ValidationError, which the shape check may already have given. The valid ones are
   * stored in one transaction.
   */
  async createBatch(principal: Principal, inputs: ReadonlyArray<CreateSuppressionRequest | ValidationError>): Promise<SuppressionBatchOutcome[]> {
    const scope = scopeOf(principal);
    const now = this.clock.now();
    const checked = inputs.map((input): NewSuppression | ValidationError => {
      if (input instanceof ValidationError) return input;
      try {
        return newSuppression(scope, input, now);
      } catch (error) {
        if (error instanceof ValidationError) return error;
        throw error;
      }
    });
    const { stored, added } = await this.suppressions.addMissing(scope, checked.filter((item): item is NewSuppression => !(item instanceof ValidationError)));
    const answered = new Set<string>();
    return checked.map((item, index) => {
      if (item instanceof ValidationError) return { index, suppression: null, created: false, error: item };
      const created = added.has(item.email) && !answered.has(item.email);
      answered.add(item.email);
      return { index, suppression: SuppressionsRepository.toWire(stored.get(item.email)!), created, error: null };
    });
  }

  async get(principal: Principal, id: string): Promise<Suppression> {
    const row = await this.suppressions.find(scopeOf(principal), id);
    if (!row) throw new NotFoundError("suppression", id);
    return SuppressionsRepository.toWire(row);
  }

  async delete(principal: Principal, id: string): Promise<DeletedObject> {
    if (!(await this.suppressions.delete(scopeOf(principal), id))) throw new NotFoundError("suppression", id);
    return { id, object: "suppression", deleted: true };
  }
}

/** A client's suppression of an address, checked: its address normalised, its reason one a client may give. */
function newSuppression(scope: Scope, input: CreateSuppressionRequest, now: number): NewSuppression {
  const email = suppressionEmail(input.email);
  if (email === null) throw ValidationError.field("/email", `${JSON.stringify(input.email)} is not a valid email address`);
  const reason = input.reason ?? "manual";
  if (!CLIENT_REASONS.has(reason)) throw ValidationError.field("/reason", "must be manual, unsubscribe or complaint");
  return { workspace_id: scope.workspaceId, environment: scope.environment, email, reason, message_id: null, detail: input.detail ?? null, created_at: now };
}
