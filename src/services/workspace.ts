import { changedOnly } from "../domain/changes.js";
import type { Clock } from "../domain/clock.js";
import { formatMailbox, parseMailbox } from "../domain/addresses.js";
import { NotFoundError, ValidationError } from "../domain/errors.js";
import type { Principal } from "../domain/environments.js";
import { newId } from "../domain/ids.js";
import { WorkspacesRepository, type WorkspacePatch } from "../db/repositories/workspaces.js";
import type { ApiKeysService } from "./api-keys.js";
import type { IdempotencyService } from "./idempotency.js";
import { mailboxTooLong } from "./message-input.js";
import type { components } from "../../generated/v1.js";

type Workspace = components["schemas"]["Workspace"];
type UpdateWorkspaceRequest = components["schemas"]["UpdateWorkspaceRequest"];

/** An updateWorkspace's answer, and the settings it changed (none: the workspace was left as it was). */
export interface UpdatedWorkspace {
  workspace: Workspace;
  changed: string[];
}

export interface BootstrapResult {
  workspace_id: string;
  sandbox_key: string;
  live_key: string;
}

export class WorkspaceService {
  constructor(
    private readonly workspaces: WorkspacesRepository,
    private readonly apiKeys: ApiKeysService,
    /** Told when content retention is set, since stored idempotent answers can hold content. */
    private readonly idempotency: IdempotencyService,
    private readonly clock: Clock,
  ) {}

  async get(principal: Principal): Promise<Workspace> {
    const row = await this.workspaces.find(principal.workspaceId);
    if (!row) throw new NotFoundError("workspace", principal.workspaceId);
    return WorkspacesRepository.toWire(row, principal.environment);
  }

  /**
   * Sets what is given; a setting given as it is (a tracking default among them) changes
   * nothing: `changed` names only the settings that did, and when that is none, nothing is
   * written (`updated_at` stays).
   */
  async update(principal: Principal, input: UpdateWorkspaceRequest): Promise<UpdatedWorkspace> {
    const patch: WorkspacePatch = {};
    if (input.name !== undefined) patch.name = input.name.trim(); // never empty: the contract wants a non-space
    if (input.default_from !== undefined) {
      if (input.default_from === null) patch.default_from = null;
      else {
        const parsed = parseMailbox(input.default_from);
        if (!parsed.ok) throw ValidationError.field("/default_from", parsed.reason);
        const formatted = formatMailbox(parsed.mailbox);
        const tooLong = mailboxTooLong(formatted);
        if (tooLong !== null) throw ValidationError.field("/default_from", tooLong);
        patch.default_from = formatted;
      }
    }
    if (input.monthly_quota !== undefined) {
      const quota = input.monthly_quota; // null removes it
      if (quota !== null && !(Number.isInteger(quota) && quota >= 1 && quota <= 1_000_000_000)) throw ValidationError.field("/monthly_quota", "must be an integer from 1 to 1000000000, or null");
      patch.monthly_quota = quota;
    }
    if (input.content_retention_days !== undefined) {
      const days = input.content_retention_days; // null keeps content for good
      if (days !== null && !(Number.isInteger(days) && days >= 1 && days <= 3650)) throw ValidationError.field("/content_retention_days", "must be an integer from 1 to 3650, or null");
      patch.content_retention_days = days;
    }
    // Each default left out keeps its value.
    if (input.tracking !== undefined) patch.tracking = input.tracking;
    const row = await this.workspaces.find(principal.workspaceId);
    if (!row) throw new NotFoundError("workspace", principal.workspaceId);
    const { tracking, ...settings } = patch;
    const changes: WorkspacePatch = changedOnly(row, settings);
    const trackingChanges = changedOnly(row.tracking, tracking ?? {});
    if (Object.keys(trackingChanges).length > 0) changes.tracking = trackingChanges;
    const changed = Object.keys(changes).sort();
    if (changed.length === 0) return { workspace: WorkspacesRepository.toWire(row, principal.environment), changed };
    await this.workspaces.update(principal.workspaceId, changes, this.clock.now());
    if (typeof changes.content_retention_days === "number") await this.idempotency.boundByContentRetention(principal.workspaceId, changes.content_retention_days);
    return { workspace: await this.get(principal), changed };
  }

  /** A workspace with one full-access key per environment; the secrets are returned once. */
  async bootstrap(name: string): Promise<BootstrapResult> {
    const now = this.clock.now();
    const id = newId("workspace", now);
    await this.workspaces.insert({ id, name, default_from: null, created_at: now, updated_at: now });
    const sandbox = await this.apiKeys.issue({ workspaceId: id, environment: "sandbox" }, "Bootstrap sandbox key", "full_access", null);
    const live = await this.apiKeys.issue({ workspaceId: id, environment: "live" }, "Bootstrap live key", "full_access", null);
    return { workspace_id: id, sandbox_key: sandbox.secret, live_key: live.secret };
  }
}
