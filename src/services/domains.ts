import { normaliseDomain } from "../domain/addresses.js";
import { changedFieldsOf } from "../domain/changes.js";
import { toIso, toIsoOrNull, type Clock } from "../domain/clock.js";
import { dkimSelectorBase, generateDkimKeyAsync } from "../domain/dkim-keys.js";
import { ConflictError, NotFoundError, UnavailableError, UniqueViolation, ValidationError } from "../domain/errors.js";
import type { DomainEventType } from "../domain/events.js";
import { domainEvent, domainEventTypeFor, type DomainAnnouncement } from "../domain/domain-events.js";
import { ENVIRONMENTS, type Environment, type Principal } from "../domain/environments.js";
import { newId } from "../domain/ids.js";
import { LIMITS } from "../domain/limits.js";
import type { Page, PageRequest } from "../db/pagination.js";
import type { DkimAlgorithm, DomainCheck, DomainRecord, DomainRow, DomainSettings, DomainsRepository, StoredDkimKey } from "../db/repositories/domains.js";
import { checkRecord, dkimRecord, dmarcFallbackName, hostKey, inRecordOrder, missingRecords, recordsFor, trackingRecord, withCurrentHosts, type DnsAnswer } from "../domain/domain-records.js";
import { afterCheck, afterUnansweredCheck, FAILING_RECHECK_MS, graceEndsAt, nextCheckAt, sendsLive, type DomainCheckPolicy, type DomainHealth, type DomainStatus } from "../domain/domain-status.js";
import type { SealedBox } from "./sealed-box.js";
import type { components } from "../../generated/v1.js";

type Domain = components["schemas"]["Domain"];
type CreateDomainRequest = components["schemas"]["CreateDomainRequest"];
type UpdateDomainRequest = components["schemas"]["UpdateDomainRequest"];
type DeletedObject = components["schemas"]["DeletedObject"];

/** An updateDomain's answer, and the settings it changed (none: the domain was left as it was). */
export interface UpdatedDomain {
  domain: Domain;
  changed: string[];
}

/**
 * DNS as domain verification needs it. `null` means the name has no such records (NXDOMAIN or
 * NODATA: an authoritative "nothing here"); a thrown error means the answer did not come
 * (SERVFAIL, timeout, refused): a temporary failure that says nothing about the records.
 */
export interface DnsLookup {
  /** Every TXT record at the name, each record's character-strings joined into one string. */
  resolveTxt(name: string): Promise<string[] | null>;
  resolveMx(name: string): Promise<Array<{ priority: number; exchange: string }> | null>;
  /** The CNAME targets at the name (a tracking domain's). */
  resolveCname(name: string): Promise<string[] | null>;
}

/** What the delivery pipeline needs to send from a domain: whether it may, and how to sign. */
export interface SendingIdentity {
  domainId: string;
  name: string;
  /**
   * Whether live mail may use it now: verified, or in the grace period of a temporary failure,
   * which ends by the clock (domain-status.ts sendsLive), even while no check concludes.
   */
  sendsLive: boolean;
  returnPathDomain: string;
  signers: Array<{ domain: string; selector: string; algorithm: DkimAlgorithm; privateKeyPem: string }>;
  /** Tracking defaults of mail from this domain; null follows the workspace's. */
  trackOpens: boolean | null;
  trackClicks: boolean | null;
  /**
   * The host name serving its tracking links: the tracking domain once a check found its CNAME,
   * else null (links use TRACKING_BASE_URL). Until then it may not resolve, and every link and
   * List-Unsubscribe URL of the mail would be dead.
   */
  trackingDomain: string | null;
}

/** An identity as cached: whether it sends live follows from its health at each use. */
type CachedIdentity = Omit<SendingIdentity, "sendsLive"> & { health: DomainHealth };

/** What an automatic check found, for the worker's log. */
export interface DomainCheckOutcome {
  workspaceId: string;
  domainId: string;
  name: string;
  from: DomainStatus;
  to: DomainStatus;
  /** The required records not found verified (their names), or null when DNS did not answer at all. */
  missing: string[] | null;
}

/** A check to save, and when it was made: the time of the events it announces. */
interface CheckedDomain {
  check: DomainCheck;
  checkedAt: number;
}

/** Domains one automatic round claims and checks at once. */
const RECHECK_BATCH = 20;

/**
 * How long sendingIdentity() answers from memory. It runs for every message, so the row is not
 * read and the keys not decrypted each time; the price is staleness towards changes made through
 * another process (this one drops its entries at once): a deleted or unverified domain keeps
 * signing and sending for at most VERIFIED_TTL_MS there, and a newly verified one is refused for
 * at most UNVERIFIED_TTL_MS.
 */
export const IDENTITY_CACHE = { VERIFIED_TTL_MS: 60_000, UNVERIFIED_TTL_MS: 5_000, MAX_ENTRIES: 10_000 } as const;

const DKIM_ALGORITHMS: ReadonlyArray<{ algorithm: DkimAlgorithm; suffix: string }> = [
  { algorithm: "rsa-sha256", suffix: "rsa" },
  { algorithm: "ed25519-sha256", suffix: "ed" },
];

/**
 * Sending domains: their DKIM keys, the DNS records to publish and their verification. Domains
 * belong to the workspace and serve both environments, so the environment plays no part here.
 */
export class DomainsService {
  private readonly identities = new Map<string, { expiresAt: number; identity: Promise<CachedIdentity | null> }>();

  constructor(
    private readonly domains: DomainsRepository,
    /** SealedBox(SECRET_KEY, "dkim-keys"): private keys are sealed at rest. */
    private readonly keyBox: SealedBox,
    private readonly dns: DnsLookup,
    /**
     * This MTA's public host name (config.delivery.hostname): SPF `a:` and return-path MX target.
     * Each check writes it into the records it checks (withCurrentHosts), so every node must have
     * the same (docs/scaling.md).
     */
    private readonly sendingHostname: string,
    private readonly clock: Clock,
    /** The host of TRACKING_BASE_URL: what a tracking domain's CNAME points at. */
    private readonly trackingHost: string,
    /** When verified domains are looked up again by themselves, and how long a failing one keeps sending. */
    private readonly policy: DomainCheckPolicy,
    /** A status change was announced: the in-process webhook dispatcher may skip the rest of its poll interval. */
    private readonly notify: () => void = () => undefined,
  ) {}

  async create(principal: Principal, input: CreateDomainRequest): Promise<Domain> {
    const name = normaliseDomainName(input.name);
    if (name === null) throw ValidationError.field("/name", `${JSON.stringify(input.name)} is not a domain name such as acme.example`);
    const returnPathDomain = returnPathDomainOf(name, input.return_path_subdomain ?? "bounces");
    const now = this.clock.now();
    // The longest name published is a DKIM selector's; it and the return-path must fit in DNS.
    const longest = Math.max(returnPathDomain.length, `${dkimSelectorBase(now, [])}-rsa._domainkey.${name}`.length);
    if (longest > 253) throw ValidationError.field("/name", `is too long: its DNS records would be named with more than 253 characters`);
    if (await this.domains.findByName(principal.workspaceId, name)) throw domainExists(name);
    // Before the keys, which a refusal should not cost. Concurrent adds may each pass it at the
    // last domain below the cap: a bound against runaway scripts, not a quota to the unit.
    if ((await this.domains.countForWorkspace(principal.workspaceId)) >= LIMITS.domainsPerWorkspace) {
      throw new ConflictError("domain_limit_reached", "Domain limit reached", `This workspace has ${LIMITS.domainsPerWorkspace} domains, the most it may have; delete one it no longer sends from first.`);
    }
    const keys = await this.newKeys(now, []);
    const row: DomainRow = {
      id: newId("domain", now),
      workspace_id: principal.workspaceId,
      name,
      status: "pending",
      return_path_domain: returnPathDomain,
      dkim_keys: keys,
      records: recordsFor(name, returnPathDomain, keys, this.hostname()),
      track_opens: null,
      track_clicks: null,
      tracking_domain: null,
      created_at: now,
      verified_at: null,
      last_checked_at: null,
      failing_since: null,
      next_check_at: null,
      version: 0,
    };
    try {
      await this.domains.insert(row);
    } catch (error) {
      if (error instanceof UniqueViolation) throw domainExists(name); // added meanwhile by a concurrent request
      throw error;
    }
    this.forget(principal.workspaceId, name);
    return this.toWire(row);
  }

  /**
   * Starts a DKIM key rotation (docs/domains.md#rotating-dkim-keys): new keys that sign nothing
   * until a check finds their `dkim_next` records, when `check` promotes them. Rotating again
   * before that replaces the new keys. Only a verified domain: one whose records are not all
   * published has something else to fix first.
   */
  async rotateDkim(principal: Principal, id: string): Promise<Domain> {
    // Made once, after the first read has found the domain rotatable; kept through the retries.
    let next: StoredDkimKey[] | undefined;
    // A check that promoted keys, another rotation or a tracking domain set in the ~0.3 s the
    // keys take would otherwise be undone.
    return this.untilSaved(() => this.rotatable(principal, id), "its new keys were being saved", async (row) => {
      next ??= await this.newKeys(this.clock.now(), row.dkim_keys.map((key) => key.selector), true);
      const dkimKeys = [...activeKeys(row.dkim_keys), ...next];
      const records = inRecordOrder([...row.records.filter((record) => record.purpose !== "dkim_next"), ...next.map((key) => dkimRecord(key, row.name, "dkim_next"))]);
      if (!(await this.domains.replaceKeys(row.workspace_id, row.id, row, { dkim_keys: dkimKeys, records }))) return null;
      this.forget(row.workspace_id, row.name);
      return this.toWire({ ...row, dkim_keys: dkimKeys, records });
    });
  }

  /**
   * Reads the domain and hands it to `write`, which saves what it derived from it over that read
   * (a compare-and-set on its version, DomainsRepository) or answers null when another write came
   * first; then reads again and retries, up to 3 times before 409 domain_changed. Every change
   * that rewrites the domain from a read goes through here, so none undoes another.
   */
  private async untilSaved<T>(read: () => Promise<DomainRow>, during: string, write: (row: DomainRow) => Promise<T | null>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const row = await read();
      const written = await write(row);
      if (written !== null) return written;
      if (attempt === 3) throw new ConflictError("domain_changed", "Domain changed meanwhile", `${row.name} kept changing while ${during}; try again.`, 1);
    }
  }

  private async rotatable(principal: Principal, id: string): Promise<DomainRow> {
    const row = await this.find(principal, id);
    if (row.status !== "verified") {
      throw new ConflictError("domain_not_verified", "Domain not verified", `Only a verified domain's DKIM keys can be rotated; ${row.name} is ${row.status}. Publish its DNS records and verify it first.`);
    }
    return row;
  }

  /** A new RSA and Ed25519 key under fresh selectors, none of them one of `taken`; `pending` for a rotation's. */
  private async newKeys(now: number, taken: readonly string[], pending = false): Promise<StoredDkimKey[]> {
    const base = dkimSelectorBase(now, taken);
    // Generated on the thread pool, one at a time per process: RSA-2048 costs ~300 ms of CPU,
    // too long to block the event loop.
    return Promise.all(
      DKIM_ALGORITHMS.map(async ({ algorithm, suffix }): Promise<StoredDkimKey> => {
        const key = await generateDkimKeyAsync(algorithm);
        const stored = { selector: `${base}-${suffix}`, algorithm, dns_value: key.dnsValue, private_key: this.keyBox.seal(key.privateKeyPem) };
        return pending ? { ...stored, pending_since: now } : stored;
      }),
    );
  }

  async list(principal: Principal, filters: { status?: DomainStatus | undefined }, page: PageRequest): Promise<Page<Domain>> {
    const rows = await this.domains.list(principal.workspaceId, filters, page);
    return { ...rows, data: rows.data.map((row) => this.toWire(row)) };
  }

  async get(principal: Principal, id: string): Promise<Domain> {
    return this.toWire(await this.find(principal, id));
  }

  /**
   * Sets the domain's tracking defaults and tracking domain; fields left out keep their value.
   * A tracking domain adds the `tracking` CNAME record (not required: the domain stays verified
   * without it, and its links use TRACKING_BASE_URL until it is set). A setting given as it is
   * changes nothing: `changed` names only those that did, and when that is none, nothing is written.
   */
  async update(principal: Principal, id: string, input: UpdateDomainRequest): Promise<UpdatedDomain> {
    // The records are rebuilt from a read: a rotation or a check meanwhile would otherwise be undone.
    return this.untilSaved(() => this.find(principal, id), "its settings were being saved", async (row) => {
      const settings = this.settingsFor(row, input);
      // Settings given as they are change nothing; the records follow tracking_domain, so they do not count.
      const { records: _records, ...given } = settings;
      const changed = changedFieldsOf(row, given);
      if (changed.length === 0) return { domain: this.toWire(row), changed };
      if (!(await this.domains.updateSettings(row.workspace_id, row.id, row, settings))) return null;
      this.forget(row.workspace_id, row.name);
      return { domain: this.toWire({ ...row, ...settings }), changed };
    });
  }

  private settingsFor(row: DomainRow, input: UpdateDomainRequest): DomainSettings {
    const settings: DomainSettings = {};
    if (input.track_opens !== undefined) settings.track_opens = input.track_opens;
    if (input.track_clicks !== undefined) settings.track_clicks = input.track_clicks;
    if (input.tracking_domain !== undefined) {
      const trackingDomain = input.tracking_domain === null ? null : this.trackingDomainOf(row, input.tracking_domain);
      settings.tracking_domain = trackingDomain;
      const others = row.records.filter((record) => record.purpose !== "tracking");
      const current = row.records.find((record) => record.purpose === "tracking");
      // The same name keeps its record and last check; a new one starts pending.
      const tracking = trackingDomain === null ? [] : current?.name === trackingDomain ? [current] : [trackingRecord(trackingDomain, this.trackingHost)];
      settings.records = inRecordOrder([...others, ...tracking]);
    }
    return settings;
  }

  /** A tracking domain must be a host under the domain: never its apex (no CNAME there) nor its return path (an MX). */
  private trackingDomainOf(row: DomainRow, input: string): string {
    const name = normaliseDomainName(input);
    const pointer = "/tracking_domain";
    if (name === null) throw ValidationError.field(pointer, `${JSON.stringify(input)} is not a host name such as track.${row.name}`);
    if (!name.endsWith(`.${row.name}`)) throw ValidationError.field(pointer, `must be a host name under ${row.name}, such as track.${row.name}`);
    if (name === row.return_path_domain) throw ValidationError.field(pointer, `must differ from the return-path domain ${row.return_path_domain}, which has an MX record`);
    return name;
  }

  async delete(principal: Principal, id: string): Promise<DeletedObject> {
    const row = await this.find(principal, id);
    if (!(await this.domains.delete(principal.workspaceId, id))) throw new NotFoundError("domain", id);
    this.forget(principal.workspaceId, row.name);
    return { id, object: "domain", deleted: true };
  }

  /**
   * Looks every record up now and moves the domain's status (src/domain/domain-status.ts). When
   * no lookup answers at all, nothing is saved and the call answers 503, unless that fails a
   * domain past its grace period (afterUnansweredCheck).
   */
  async verify(principal: Principal, id: string): Promise<Domain> {
    // A check is saved only over the domain it was made against; a change meanwhile means again.
    return this.untilSaved(() => this.find(principal, id), "it was being verified", async (row) => {
      const checked = await this.check(row);
      if (checked === null) throw new UnavailableError(`DNS did not answer for ${row.name} (a temporary failure); nothing changed. Try again shortly.`, 30);
      return (await this.save(row, checked)) ? this.toWire({ ...row, ...checked.check }) : null;
    });
  }

  /**
   * Saves a check over the domain as it was read (false when another check, a rotation or a
   * settings change came first), announcing what it changed to the workspace's webhook endpoints
   * in the same write.
   */
  private async save(row: DomainRow, { check, checkedAt }: CheckedDomain): Promise<boolean> {
    const announcements = this.announcements(row, check, checkedAt);
    if (!(await this.domains.saveCheck(row.workspace_id, row.id, row, check, announcements))) return false;
    this.forget(row.workspace_id, row.name);
    if (announcements.length > 0) this.notify();
    return true;
  }

  /**
   * The domain events of a check (docs/webhooks.md#domain-events): the status it moves the
   * domain into, if it changes it, and the end of the DKIM rotation it completed, if any.
   */
  private announcements(row: DomainRow, check: DomainCheck, createdAt: number): DomainAnnouncement[] {
    const domain = this.toWire({ ...row, ...check });
    const missing = missingRecords(check.records);
    const announce = (type: DomainEventType, extra: Record<string, unknown> = {}): DomainAnnouncement => {
      const id = newId("event", createdAt);
      const payloads = Object.fromEntries(
        ENVIRONMENTS.map((environment) => [environment, JSON.stringify(domainEvent(id, type, toIso(createdAt), environment, domain, row.status, missing, extra))]),
      ) as Record<Environment, string>;
      return { id, type, createdAt, payloads };
    };
    const announcements: DomainAnnouncement[] = [];
    const moved = check.status === row.status ? null : domainEventTypeFor(check.status);
    if (moved !== null) announcements.push(announce(moved));
    // A check ends a rotation only by promoting its keys (promoteRotation): pending before, none after.
    if (dkimRotation(row.dkim_keys) !== null && dkimRotation(check.dkim_keys) === null) {
      const selectors = (keys: readonly StoredDkimKey[]) => activeKeys(keys).map((key) => key.selector);
      announcements.push(announce("domain.dkim_rotated", { selectors: selectors(check.dkim_keys), retired_selectors: selectors(row.dkim_keys) }));
    }
    return announcements;
  }

  /**
   * Checks the domains whose automatic check is due (verified ones every DOMAIN_RECHECK_MINUTES,
   * failing ones hourly), up to one batch; the worker calls it until it answers an empty list.
   * Each domain is claimed first, so workers sharing a database check it once. When DNS does
   * not answer at all, the domain keeps its state (but fails past its grace period) and is tried
   * again at the claim's end.
   */
  async recheckDue(): Promise<DomainCheckOutcome[]> {
    if (this.policy.recheckMs === 0) return [];
    const now = this.clock.now();
    const due = await this.domains.dueForCheck(now, RECHECK_BATCH);
    const retryAt = now + Math.min(FAILING_RECHECK_MS, this.policy.recheckMs);
    const outcomes = await Promise.all(
      due.map(async (domain): Promise<DomainCheckOutcome | null> => {
        if (!(await this.domains.claimCheck(domain, retryAt))) return null; // another worker has it
        const row = await this.domains.find(domain.workspace_id, domain.id);
        if (!row) return null; // deleted meanwhile
        const checked = await this.check(row);
        // Not saved when anything changed the domain meanwhile: checked again at the claim's end.
        if (checked !== null && !(await this.save(row, checked))) return null;
        const missing = checked && missingRecords(checked.check.records);
        return { workspaceId: row.workspace_id, domainId: row.id, name: row.name, from: row.status, to: checked?.check.status ?? row.status, missing };
      }),
    );
    return outcomes.filter((outcome) => outcome !== null);
  }

  /**
   * Looks every record up and works out the domain's new state; null when no lookup answered
   * and that changes nothing (afterUnansweredCheck). The records are judged against, and saved
   * with, this server's host names as configured now (withCurrentHosts): what the API shows is
   * what was checked. A record whose lookup fails temporarily (SERVFAIL, timeout) keeps its
   * previous status and `found`: a DNS hiccup must not take a verified domain towards failure;
   * nor can such a kept status verify a pending or failed one, nor move `verified_at`, which
   * need every required record found by this check itself. Nor does a check that got no answer
   * move `last_checked_at`, which says when DNS last told us something (docs/domains.md).
   */
  private async check(row: DomainRow): Promise<CheckedDomain | null> {
    const hostname = this.hostname();
    const current = withCurrentHosts(row.records, hostname, this.trackingHost);
    const answers = await Promise.all(current.map((record) => this.lookUp(record)));
    const now = this.clock.now();
    if (answers.every((answer) => answer === undefined)) {
      const failed = afterUnansweredCheck(row, now, this.policy);
      if (failed === null) return null;
      const check = { ...failed, records: current, dkim_keys: row.dkim_keys, verified_at: row.verified_at, last_checked_at: row.last_checked_at, next_check_at: nextCheckAt(failed.status, now, this.policy) };
      return { check, checkedAt: now };
    }
    const looked = current.map((record, i): DomainRecord => {
      const answer = answers[i];
      if (answer === undefined) return record; // temporary failure: keep what the last check found
      return { ...record, ...checkRecord(record, answer, record.purpose === "tracking" ? this.trackingHost : hostname) };
    });
    const { dkim_keys, records } = promoteRotation(row.dkim_keys, looked, answers);
    const requiredFound = records.every((record) => !record.required || record.status === "verified");
    const freshlyVerified = requiredFound && looked.every((record, i) => !record.required || answers[i] !== undefined);
    const health = afterCheck(row, { requiredFound, freshlyVerified }, now, this.policy);
    const check = { ...health, records, dkim_keys, verified_at: freshlyVerified ? now : row.verified_at, last_checked_at: now, next_check_at: nextCheckAt(health.status, now, this.policy) };
    return { check, checkedAt: now };
  }

  /**
   * The workspace's domain of that name with its decrypted DKIM keys, or null when the workspace
   * has no such domain. For the delivery pipeline and the accept path: answered from memory for
   * up to IDENTITY_CACHE's TTLs, but for `sendsLive`, worked out at each call from the clock.
   */
  async sendingIdentity(workspaceId: string, domainName: string): Promise<SendingIdentity | null> {
    const found = await this.cachedIdentity(workspaceId, domainName);
    if (found === null) return null;
    const { health, ...identity } = found;
    return { ...identity, sendsLive: sendsLive(health, this.clock.now(), this.policy) };
  }

  private async cachedIdentity(workspaceId: string, domainName: string): Promise<CachedIdentity | null> {
    const name = normaliseDomainName(domainName);
    if (name === null) return null;
    const key = cacheKey(workspaceId, name);
    const now = this.clock.now();
    const cached = this.identities.get(key);
    if (cached && cached.expiresAt > now) return cached.identity;
    const identity = this.loadIdentity(workspaceId, name);
    const entry = { expiresAt: now + IDENTITY_CACHE.UNVERIFIED_TTL_MS, identity };
    this.identities.delete(key);
    this.evict(now);
    this.identities.set(key, entry); // concurrent callers share this lookup
    try {
      const found = await identity;
      if (found && sendsLive(found.health, now, this.policy)) entry.expiresAt = now + IDENTITY_CACHE.VERIFIED_TTL_MS;
      return found;
    } catch (error) {
      if (this.identities.get(key) === entry) this.identities.delete(key);
      throw error;
    }
  }

  private async loadIdentity(workspaceId: string, name: string): Promise<CachedIdentity | null> {
    const row = await this.domains.findByName(workspaceId, name);
    if (!row) return null;
    const tracking = row.records.find((record) => record.purpose === "tracking");
    return {
      domainId: row.id,
      name: row.name,
      health: { status: row.status, failing_since: row.failing_since },
      returnPathDomain: row.return_path_domain,
      trackOpens: row.track_opens,
      trackClicks: row.track_clicks,
      trackingDomain: tracking?.status === "verified" && tracking.name === row.tracking_domain ? row.tracking_domain : null,
      signers: activeKeys(row.dkim_keys).map((key) => ({ domain: row.name, selector: key.selector, algorithm: key.algorithm, privateKeyPem: this.keyBox.open(key.private_key) })),
    };
  }

  /** Drops expired entries from the oldest end (decrypted keys do not linger) and keeps the cache bounded. */
  private evict(now: number): void {
    for (const [key, entry] of this.identities) {
      if (entry.expiresAt > now && this.identities.size < IDENTITY_CACHE.MAX_ENTRIES) break;
      this.identities.delete(key);
    }
  }

  private forget(workspaceId: string, name: string): void {
    this.identities.delete(cacheKey(workspaceId, name));
  }

  private async find(principal: Principal, id: string): Promise<DomainRow> {
    const row = await this.domains.find(principal.workspaceId, id);
    if (!row) throw new NotFoundError("domain", id);
    return row;
  }

  /** The record's DNS answer; undefined when the lookup (or DMARC's second one) failed temporarily. */
  private async lookUp(record: DomainRecord): Promise<DnsAnswer | undefined> {
    try {
      if (record.type === "MX") return { type: "MX", mx: (await this.dns.resolveMx(record.name)) ?? [] };
      if (record.type === "CNAME") return { type: "CNAME", cname: (await this.dns.resolveCname(record.name)) ?? [] };
      const txt = (await this.dns.resolveTxt(record.name)) ?? [];
      const fallback = dmarcFallbackName(record, txt);
      return { type: "TXT", txt, organizational: fallback === null ? undefined : ((await this.dns.resolveTxt(fallback)) ?? []) };
    } catch {
      return undefined;
    }
  }

  /** The domain on the wire; its grace period's end follows from this server's DOMAIN_GRACE_HOURS. */
  private toWire(row: DomainRow): Domain {
    return {
      id: row.id,
      object: "domain",
      name: row.name,
      status: row.status,
      return_path_domain: row.return_path_domain,
      dkim: activeKeys(row.dkim_keys).map(({ selector, algorithm }) => ({ selector, algorithm })),
      records: row.records,
      track_opens: row.track_opens,
      track_clicks: row.track_clicks,
      tracking_domain: row.tracking_domain,
      created_at: toIso(row.created_at),
      verified_at: toIsoOrNull(row.verified_at),
      last_checked_at: toIsoOrNull(row.last_checked_at),
      failing_since: toIsoOrNull(row.failing_since),
      grace_ends_at: row.failing_since === null ? null : toIso(graceEndsAt(row.failing_since, this.policy)),
      // Stored while automatic checks were on, it would announce a check that never comes.
      next_check_at: this.policy.recheckMs === 0 ? null : toIsoOrNull(row.next_check_at),
      dkim_rotation: dkimRotation(row.dkim_keys),
    };
  }

  private hostname(): string {
    return hostKey(this.sendingHostname);
  }
}

const cacheKey = (workspaceId: string, name: string) => `${workspaceId}\u0000${name}`;

/** The keys that sign the domain's mail: all but a rotation's new ones. */
const activeKeys = (keys: readonly StoredDkimKey[]) => keys.filter((key) => key.pending_since === undefined);

/** A rotation in progress, as the API shows it. */
function dkimRotation(keys: readonly StoredDkimKey[]): Domain["dkim_rotation"] {
  const next = keys.filter((key) => key.pending_since !== undefined);
  if (next.length === 0) return null;
  return { started_at: toIso(next[0]!.pending_since!), keys: next.map(({ selector, algorithm }) => ({ selector, algorithm })) };
}

/**
 * Ends a DKIM rotation when this check found every one of its `dkim_next` records by its own
 * answers: the new keys sign from then on, and the old keys and their records go (docs/domains.md
 * #rotating-dkim-keys). The new records become `dkim`, required, with what this check found.
 */
function promoteRotation(keys: StoredDkimKey[], records: DomainRecord[], answers: ReadonlyArray<DnsAnswer | undefined>): { dkim_keys: StoredDkimKey[]; records: DomainRecord[] } {
  const next = records.flatMap((record, i) => (record.purpose === "dkim_next" ? [{ record, fresh: answers[i] !== undefined }] : []));
  if (next.length === 0 || !next.every(({ record, fresh }) => fresh && record.status === "verified")) return { dkim_keys: keys, records };
  return {
    dkim_keys: keys.filter((key) => key.pending_since !== undefined).map(({ pending_since: _started, ...key }) => key),
    records: inRecordOrder(records.filter((record) => record.purpose !== "dkim").map((record) => (record.purpose === "dkim_next" ? { ...record, purpose: "dkim" as const, required: true } : record))),
  };
}

const domainExists = (name: string) =>
  new ConflictError("domain_exists", "Domain already added", `This workspace already has the domain ${name}; use that one, or delete it first to start over with new keys.`);

/**
 * The return-path domain, normalised as names are: the contract's pattern lets through labels
 * that IDNA refuses (`xn--zz`, bad punycode), which no DNS provider would take.
 */
function returnPathDomainOf(name: string, subdomain: string): string {
  const returnPathDomain = normaliseDomainName(`${subdomain}.${name}`);
  if (returnPathDomain === null) throw ValidationError.field("/return_path_subdomain", `${JSON.stringify(subdomain)} is not a DNS label such as bounces`);
  return returnPathDomain;
}

/** A domain name as Domains store it (normaliseDomain; surrounding space and one trailing dot dropped). Null when invalid. */
export function normaliseDomainName(input: string): string | null {
  return normaliseDomain(input.trim(), { trailingDot: true });
}
