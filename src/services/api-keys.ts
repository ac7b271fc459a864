import { digestSecret, generateSecret, redactSecret } from "../domain/api-key-secret.js";
import { changedFieldsOf } from "../domain/changes.js";
import type { Clock } from "../domain/clock.js";
import { parseInstant, toIso } from "../domain/clock.js";
import { ConflictError, DomainError, NotFoundError, ValidationError } from "../domain/errors.js";
import { actorOf, type Actor, type Environment, type Permission, type Principal, type Scope } from "../domain/environments.js";
import { newId } from "../domain/ids.js";
import { applyRestrictions, NO_RESTRICTIONS, type KeyRestrictions } from "../domain/key-restrictions.js";
import { KEY_PERMISSION_ROLES, roleAtLeast } from "../domain/roles.js";
import type { ApiKeyRow, ApiKeysRepository, SecretRow } from "../db/repositories/api-keys.js";
import { ApiKeysRepository as Keys } from "../db/repositories/api-keys.js";
import type { Page, PageRequest } from "../db/pagination.js";
import type { components } from "../../generated/v1.js";

type ApiKey = components["schemas"]["ApiKey"];
type ApiKeyWithSecret = components["schemas"]["ApiKeyWithSecret"];
type CreateApiKeyRequest = components["schemas"]["CreateApiKeyRequest"];
type UpdateApiKeyRequest = components["schemas"]["UpdateApiKeyRequest"];

/** An updateApiKey's answer, and the fields it changed (none: the key was left as it was). */
export interface UpdatedApiKey {
  key: ApiKey;
  changed: string[];
}

/** A revokeApiKey's answer, and whether this call revoked the key (false: it was revoked already). */
export interface RevokedApiKey {
  key: ApiKey;
  revoked: boolean;
}

export const DEFAULT_ROTATION_OVERLAP_SECONDS = 86_400;

export class ApiKeysService {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly clock: Clock,
  ) {}

  /** Keys are made in the caller's own environment: a sandbox key can never mint a live one. */
  async create(principal: Principal, input: CreateApiKeyRequest): Promise<ApiKeyWithSecret> {
    const now = this.clock.now();
    const permission = input.permission ?? "full_access";
    assertMayManageKey(principal, permission, "create", input.permission === undefined ? " (a key created without a permission is full_access)" : "");
    const expiresAt = input.expires_at === undefined ? null : parseInstant(input.expires_at);
    const { restrictions, errors } = applyRestrictions(NO_RESTRICTIONS, input.restrictions, permission, "/restrictions");
    if (expiresAt !== null && Number.isNaN(expiresAt)) errors.unshift({ location: "body", pointer: "/expires_at", message: "must be an RFC 3339 date-time" });
    else if (expiresAt !== null && expiresAt <= now) errors.unshift({ location: "body", pointer: "/expires_at", message: "must be in the future" });
    if (errors.length > 0) throw new ValidationError(errors);
    const { key, secret } = await this.issue(scopeOf(principal), input.name, permission, expiresAt, restrictions, actorOf(principal.credential));
    return { ...Keys.toWire(key), secret, previous_secret_expires_at: null };
  }

  /** Creates a key with a fresh secret (also used by bootstrap, with no creator). */
  async issue(scope: Scope, name: string, permission: Permission, expiresAt: number | null, restrictions: KeyRestrictions = NO_RESTRICTIONS, createdBy: Actor | null = null): Promise<{ key: ApiKeyRow; secret: string }> {
    const now = this.clock.now();
    const secret = generateSecret(scope.environment);
    const key: ApiKeyRow = {
      id: newId("apiKey", now),
      workspace_id: scope.workspaceId,
      environment: scope.environment as Environment,
      name,
      permission,
      redacted_key: redactSecret(secret),
      expires_at: expiresAt,
      revoked_at: null,
      last_used_at: null,
      last_used_ip: null,
      created_at: now,
      created_by: createdBy,
      restrictions,
    };
    await this.keys.insert(key, secretRow(key.id, secret, now));
    return { key, secret };
  }

  async list(principal: Principal, page: PageRequest): Promise<Page<ApiKey>> {
    return this.keys.list(scopeOf(principal), page);
  }

  async get(principal: Principal, id: string): Promise<ApiKey> {
    return Keys.toWire(await this.find(principal, id));
  }

  /**
   * Renames the key or changes its restrictions; each restriction given replaces that one. A
   * name or restrictions given as they are change nothing: `changed` names only what did, and
   * when that is nothing, nothing is written.
   */
  async update(principal: Principal, id: string, input: UpdateApiKeyRequest): Promise<UpdatedApiKey> {
    const key = await this.find(principal, id);
    assertMayManageKey(principal, key.permission, "change");
    if (key.revoked_at !== null) throw new ConflictError("api_key_revoked", "API key revoked", "A revoked key cannot be changed; create a new key.");
    const { restrictions, errors } = applyRestrictions(key.restrictions, input.restrictions, key.permission, "/restrictions");
    if (errors.length > 0) throw new ValidationError(errors);
    const changes = { name: input.name, restrictions: input.restrictions === undefined ? undefined : restrictions };
    const changed = changedFieldsOf(key, changes);
    if (changed.length === 0) return { key: Keys.toWire(key), changed };
    await this.keys.update(scopeOf(principal), id, changes);
    return { key: Keys.toWire(await this.find(principal, id)), changed };
  }

  /**
   * Revokes the key; a revoked key is answered as it is. `revoked` says whether this call did it
   * (of two at once, one does), so a repeat is not recorded as another revocation.
   */
  async revoke(principal: Principal, id: string): Promise<RevokedApiKey> {
    await this.find(principal, id);
    const revoked = await this.keys.revoke(scopeOf(principal), id, this.clock.now());
    return { key: Keys.toWire(await this.find(principal, id)), revoked };
  }

  async rotate(principal: Principal, id: string, overlapSeconds: number = DEFAULT_ROTATION_OVERLAP_SECONDS): Promise<ApiKeyWithSecret> {
    const key = await this.find(principal, id);
    assertMayManageKey(principal, key.permission, "rotate");
    const now = this.clock.now();
    if (key.revoked_at !== null) throw revokedKeyConflict();
    if (key.expires_at !== null && key.expires_at <= now) throw new ConflictError("api_key_expired", "API key expired", "An expired key cannot be rotated; create a new key.");
    const secret = generateSecret(key.environment);
    const previousExpiresAt = now + overlapSeconds * 1000;
    // Checked again as it writes: a revocation since the read above leaves nothing to rotate.
    if (!(await this.keys.rotate(key.id, secretRow(key.id, secret, now), previousExpiresAt))) throw revokedKeyConflict();
    return { ...Keys.toWire(await this.find(principal, id)), secret, previous_secret_expires_at: toIso(previousExpiresAt) };
  }

  private async find(principal: Principal, id: string): Promise<ApiKeyRow> {
    const key = await this.keys.find(scopeOf(principal), id);
    if (!key) throw new NotFoundError("API key", id);
    return key;
  }
}

/**
 * Throws unless the caller may create, change or rotate a key with `permission`: a member needs
 * KEY_PERMISSION_ROLES' role for it (src/domain/roles.ts says why), on top of the operation's
 * x-mailroom-role. The operations' least role stays developer, since developers manage
 * sending_access keys, so the check is here rather than at admission. An API key is not a member:
 * admission already required full_access of it, and such a key may manage any key.
 */
function assertMayManageKey(principal: Principal, permission: Permission, action: "create" | "change" | "rotate", note = ""): void {
  const { credential } = principal;
  if (credential.kind !== "user_token") return;
  const needed = KEY_PERMISSION_ROLES[permission];
  if (roleAtLeast(credential.role, needed)) return;
  const doing = { create: "Creating", change: "Changing", rotate: "Rotating" }[action];
  const alternative = action === "create" ? `, or create a sending_access key${note}` : "";
  throw new DomainError(
    "forbidden",
    "insufficient_role",
    "Insufficient role",
    `${doing} a ${permission} key needs the ${needed} role or above: such a key can call every operation, ${needed}-only ones included. ` +
      `You are ${credential.role === "admin" ? "an" : "a"} ${credential.role} of this workspace; ask ${needed === "admin" ? "an" : "a"} ${needed} to ${action} it${alternative}.`,
  );
}

export const scopeOf = (principal: Principal): Scope => ({ workspaceId: principal.workspaceId, environment: principal.environment });

function secretRow(keyId: string, secret: string, now: number): SecretRow {
  return { digest: digestSecret(secret), api_key_id: keyId, redacted_key: redactSecret(secret), expires_at: null, created_at: now };
}

const revokedKeyConflict = () => new ConflictError("api_key_revoked", "API key revoked", "A revoked key cannot be rotated; create a new key.");
