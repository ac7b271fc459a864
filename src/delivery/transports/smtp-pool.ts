import { isAscii } from "node:buffer";
import { isIP } from "node:net";
import { PassThrough } from "node:stream";
import type { ConnectionOptions } from "node:tls";
import type { NodemailerError } from "nodemailer/lib/errors.js";
import SMTPConnection from "nodemailer/lib/smtp-connection/index.js";
import type { DeliveryConfig } from "../../config.js";
import { classifyReply, parseReply, type SmtpStage } from "../smtp-reply.js";
import type { Envelope, SendOptions, SendResult } from "./transport.js";

/**
 * Pooled SMTP client connections, per destination (an MX host or the relay, and its port), built
 * on nodemailer's SMTPConnection: one transaction (one recipient) at a time per connection, at
 * most `maxConnectionsPerDestination` connections per destination, further transactions wait
 * in line for a connection. A connection is reused for the next transaction (after an RSET
 * when the last one was refused before its message was sent), closed after `idleTimeoutMs`
 * unused, closed with QUIT instead of reused once past its reuse limits (mayReuse()), and
 * discarded at the first sign of trouble.
 *
 * The pool also caps the transactions in progress over every destination (`maxTransactions`,
 * DELIVERY_CONCURRENCY): see dispatch() for why the cap is here rather than around send().
 *
 * Every transaction's result is classified here (src/delivery/smtp-reply.ts), including the
 * cases without any reply: failure to connect is 4.4.1 (no answer from host), a connection
 * lost or timed out afterwards 4.4.2 (bad connection). Never throws for a mail outcome.
 */

/**
 * How a destination's connections use TLS.
 * - opportunistic (MX delivery, Postfix's `may` level, RFC 7435): STARTTLS when the server
 *   offers it, any certificate accepted, plaintext when STARTTLS fails. The MX host's name comes
 *   from unauthenticated DNS, so a verified certificate for that name proves nothing against an
 *   active attacker (that takes DANE or MTA-STS); many MX hosts have self-signed or mismatched
 *   certificates, and refusing them would only make the mail go in plaintext or not at all.
 *   Encryption still defeats passive eavesdropping, which is what it is for.
 * - starttls (relay over smtp://): STARTTLS when offered, certificate verified, no fallback:
 *   a relay is a known host with credentials to protect.
 * - require-starttls: the same, refusing a relay that does not offer STARTTLS.
 * - implicit (relay over smtps://): TLS from the first byte, certificate verified.
 */
export type TlsMode = "opportunistic" | "starttls" | "require-starttls" | "implicit";

export interface SmtpDestination {
  /** Connections are pooled and capped per key ("mx1.example.com:25"). */
  key: string;
  /** The host's name: EHLO peer, SNI, the name a verified certificate must carry, remoteHost. */
  hostname: string;
  /**
   * Tried in order when this send needs a new connection: IP addresses, or the hostname to
   * resolve. Each send's own, as just resolved: the pool keeps none between sends.
   */
  addresses: readonly string[];
  port: number;
  tls: TlsMode;
  /** Extra TLS options (a private CA for a relay: `{ ca }`). */
  tlsOptions?: ConnectionOptions;
  auth?: { user: string; pass: string } | null;
}

export interface TransactionResult extends SendResult {
  /** Where the transaction ended (see SmtpStage); "connect" = no session was set up. */
  stage: SmtpStage;
  /** The server replied (false: no connection, a timeout, a lost connection). */
  answered: boolean;
  /** The whole message was sent (the server may have it even without a reply, RFC 1047). */
  payloadSent: boolean;
}

export interface SmtpPoolSettings {
  /** EHLO name. */
  hostname: string;
  maxConnectionsPerDestination: number;
  /**
   * Sends in progress at once over every destination (DELIVERY_CONCURRENCY): a send holds one of
   * these slots while it opens its connection (when it needs a new one) and runs its transaction,
   * never while it waits for its destination. Unlimited when left out.
   */
  maxTransactions?: number;
  connectTimeoutMs: number;
  /** Each command's reply, DATA transfer (inactivity), the reply to the final dot; 5 of it bound a whole transaction. */
  commandTimeoutMs: number;
  /** An unused connection is closed after this long. Default 30 s: long enough to carry a
   * burst, short enough not to hold connections the remote side counts against us. */
  idleTimeoutMs?: number;
  /**
   * A connection open longer than this carries no further transaction: it is closed with QUIT,
   * and the next send opens a new one to the addresses it just resolved. Default 300 s, Postfix's
   * smtp_connection_reuse_time_limit. Under steady traffic a connection never sits idle long
   * enough to time out, and without this it would carry mail to an MX host's old address, and
   * past its old certificate, for as long as the traffic lasts.
   */
  reuseTimeLimitMs?: number;
  /**
   * Transactions (one message to one recipient each) a connection carries at most, then it is
   * closed with QUIT; 0 for no limit. Default 100, nodemailer's pool's: receivers that cap the
   * messages of a session answer the one past their cap with a 421, a deferral that costs that
   * message a retry minutes later, where a new connection costs a handshake.
   */
  maxMessagesPerConnection?: number;
  /** For tests: the clock connections' ages are read off (epoch milliseconds). */
  now?: () => number;
}

export interface SmtpPoolStats {
  destinations: number;
  open: number;
  idle: number;
  /** Sends waiting for their turn: a transaction slot and their destination's connection. */
  waiting: number;
  /** Sends holding a transaction slot: opening their connection, or in their transaction. */
  sending: number;
}

const DEFAULT_IDLE_MS = 30_000;
const DEFAULT_REUSE_TIME_LIMIT_MS = 300_000;
const DEFAULT_MAX_MESSAGES_PER_CONNECTION = 100;

export class SmtpPool {
  private readonly destinations = new Map<string, DestinationState>();
  private readonly idleTimeoutMs: number;
  private readonly reuseTimeLimitMs: number;
  private readonly maxMessagesPerConnection: number;
  private readonly maxTransactions: number;
  private readonly now: () => number;
  /** Sends holding a transaction slot. */
  private sending = 0;
  /** The next waiter's place in the order of arrival, which dispatch() follows. */
  private nextTurn = 0;
  private closed = false;

  constructor(private readonly settings: SmtpPoolSettings) {
    this.idleTimeoutMs = settings.idleTimeoutMs ?? DEFAULT_IDLE_MS;
    this.reuseTimeLimitMs = settings.reuseTimeLimitMs ?? DEFAULT_REUSE_TIME_LIMIT_MS;
    const maxMessages = settings.maxMessagesPerConnection ?? DEFAULT_MAX_MESSAGES_PER_CONNECTION;
    this.maxMessagesPerConnection = maxMessages === 0 ? Infinity : maxMessages;
    this.maxTransactions = settings.maxTransactions ?? Infinity;
    this.now = settings.now ?? Date.now;
  }

  static fromConfig(config: DeliveryConfig, overrides: Partial<SmtpPoolSettings> = {}): SmtpPool {
    return new SmtpPool({
      hostname: config.hostname,
      maxConnectionsPerDestination: config.maxConnectionsPerDestination,
      maxTransactions: config.concurrency,
      connectTimeoutMs: config.connectTimeoutMs,
      commandTimeoutMs: config.commandTimeoutMs,
      reuseTimeLimitMs: config.connectionReuseTimeLimitSeconds * 1000,
      maxMessagesPerConnection: config.maxMessagesPerConnection,
      ...overrides,
    });
  }

  /**
   * One transaction: MAIL FROM, one RCPT TO, DATA; its classified result. `options.begin()` is
   * called once the connection is in hand, before MAIL FROM; if it throws, the connection goes
   * back to the pool unused and send() rejects with its error.
   */
  async send(destination: SmtpDestination, envelope: Envelope, mime: Buffer, options: SendOptions = {}): Promise<TransactionResult> {
    // A send racing shutdown is deferred like the queued ones: it is retried after the restart.
    if (this.closed) return shutdownResult(destination);
    const state = this.stateOf(destination);
    const lease = await this.acquire(state, destination);
    if ("failure" in lease) return lease.failure;
    // From here the send holds a transaction slot and the connection, until release() or putBack().
    try {
      options.begin?.();
    } catch (refusal) {
      this.putBack(state, lease.connection);
      throw refusal;
    }
    let { connection } = lease;
    const limitMs = transactionLimitMs(this.settings, mime.length);
    let result = await transact(connection, envelope, mime, limitMs);
    // A reused connection can have been closed by the server while it sat idle. Nothing was
    // accepted on it (no reply, no complete message), so one more try on a new one is safe.
    if (lease.reused && isBroken(result) && !this.closed) {
      const fresh = await this.replace(state, destination, connection);
      if ("failure" in fresh) return fresh.failure;
      connection = fresh.connection;
      result = await transact(connection, envelope, mime, limitMs);
    }
    this.release(state, connection, result);
    return result;
  }

  stats(): SmtpPoolStats {
    const all = [...this.destinations.values()];
    return {
      destinations: all.length,
      open: all.reduce((n, s) => n + s.open, 0),
      idle: all.reduce((n, s) => n + s.idle.length, 0),
      waiting: all.reduce((n, s) => n + s.waiters.length, 0),
      sending: this.sending,
    };
  }

  /** Ends idle connections now and busy ones when their transaction ends; queued sends are deferred. */
  async close(): Promise<void> {
    this.closed = true;
    const drained: Array<Promise<void>> = [];
    for (const state of this.destinations.values()) {
      for (const waiter of state.waiters.splice(0)) waiter.grant({ kind: "shutdown" });
      for (const connection of state.idle.splice(0)) this.discard(state, connection, { polite: true });
      if (state.open > 0) drained.push(new Promise((resolve) => (state.onDrained = resolve)));
    }
    await Promise.all(drained);
  }

  private stateOf(destination: SmtpDestination): DestinationState {
    let state = this.destinations.get(destination.key);
    if (!state) {
      state = { key: destination.key, open: 0, idle: [], waiters: [], failing: false, onDrained: null };
      this.destinations.set(destination.key, state);
    }
    return state;
  }

  /** Waits in the destination's line for a turn; with it, a connection (opened now, to this send's destination, when it needs one). */
  private async acquire(state: DestinationState, destination: SmtpDestination): Promise<Lease> {
    const ticket = await new Promise<Ticket>((grant) => {
      state.waiters.push({ turn: this.nextTurn++, grant });
      this.dispatch();
    });
    if (ticket.kind === "shutdown") return { failure: shutdownResult(destination) };
    if (ticket.kind === "failure") return { failure: ticket.failure };
    if (ticket.kind === "connection") return { connection: ticket.connection, reused: true };
    return this.openIn(state, destination);
  }

  /**
   * Gives the free transaction slots to waiting sends, each with what it waits for at its
   * destination: an idle connection, or room to open one. Of the destinations that have that,
   * the one whose first waiter came first goes first.
   *
   * The slot and the destination's connection are granted together, in this one place. Taken
   * around send(), a slot would be held while its send waits in line for a busy destination's
   * few connections, and a backlog to one slow destination would hold every slot and stall the
   * mail to all the others (head-of-line blocking). Taken after the connection, an idle connection
   * would be held unused while its send waits for a slot, and the remote side may close it. Here
   * a waiting send holds nothing, and no lock is ever waited for while another is held, so there
   * is no order in which two sends could wait for each other.
   */
  private dispatch(): void {
    while (!this.closed && this.sending < this.maxTransactions) {
      const next = this.nextInTurn();
      if (next === null) return;
      const waiter = next.waiters.shift()!;
      this.sending++;
      const idle = this.takeIdle(next);
      if (idle) {
        waiter.grant({ kind: "connection", connection: idle });
      } else {
        next.open++;
        waiter.grant({ kind: "room" });
      }
    }
  }

  /**
   * The most recently used of the destination's idle connections (the least likely to have been
   * closed by the server) that may still be reused. One that passed its time limit while idle is
   * closed with QUIT, and its place is given up: the waiter opens a new connection instead.
   */
  private takeIdle(state: DestinationState): Connection | null {
    for (let idle = state.idle.pop(); idle; idle = state.idle.pop()) {
      idle.stopIdleTimer();
      if (this.mayReuse(idle)) return idle;
      idle.end(true);
      state.open--;
    }
    return null;
  }

  /** The destination whose first waiter came first, of those whose first waiter could go now. */
  private nextInTurn(): DestinationState | null {
    let next: DestinationState | null = null;
    for (const state of this.destinations.values()) {
      const first = state.waiters[0];
      if (first && this.hasRoom(state) && (next === null || first.turn < next.waiters[0]!.turn)) next = state;
    }
    return next;
  }

  /**
   * An idle connection, or room for one more; but no new connection while the destination's last
   * attempt to connect failed and others are still open or opening (connectionGone()).
   */
  private hasRoom(state: DestinationState): boolean {
    return state.idle.length > 0 || (state.open < this.settings.maxConnectionsPerDestination && !state.failing);
  }

  /** Opens a connection in a place already counted in `state.open`; should it fail, the place and the slot are given up. */
  private async openIn(state: DestinationState, destination: SmtpDestination): Promise<Lease> {
    const opened = await this.open(destination);
    if ("failure" in opened) {
      this.sending--;
      this.connectionGone(state, { failWaitersWith: opened.failure });
      return opened;
    }
    this.watch(state, opened.connection);
    if (state.failing) {
      state.failing = false; // the destination takes connections again: room for its waiters
      this.dispatch();
    }
    return { connection: opened.connection, reused: false };
  }

  /** A dead connection's replacement, in its place and slot: the retry does not wait in line again. */
  private replace(state: DestinationState, destination: SmtpDestination, broken: Connection): Promise<Lease> {
    broken.end(false);
    return this.openIn(state, destination);
  }

  /** After a transaction: the slot is free; reuse the connection (reset first if the transaction was cut short), or discard it. */
  private release(state: DestinationState, connection: Connection, result: TransactionResult): void {
    this.sending--;
    const reusable = result.answered;
    // Past its reuse limits, QUIT at once: it ends a transaction refused midway too, without an RSET first.
    if (!reusable || this.closed || !connection.usable() || !this.mayReuse(connection)) {
      this.discard(state, connection, { polite: reusable });
      return;
    }
    // RFC 5321 §4.1.1.4: the reply to the end of the message data ends the transaction and
    // clears the server's buffers, whatever it said; the next MAIL can follow at once (as
    // nodemailer's own pool does), which saves a round trip per message. A transaction refused
    // earlier (at MAIL, RCPT or DATA) is still open and needs RSET (§4.1.1.5). A connection
    // that died meanwhile is found out by the next MAIL, before any of its message is sent,
    // and send() then retries on a new one.
    if (result.payloadSent) return this.reuse(state, connection);
    connection.reset((ok) => {
      if (!ok || this.closed) return this.discard(state, connection, { polite: ok });
      this.reuse(state, connection);
    });
    this.dispatch(); // the slot, while the connection resets
  }

  /** A connection taken for a transaction that did not begin (begin() refused): back as it was, with the slot. */
  private putBack(state: DestinationState, connection: Connection): void {
    this.sending--;
    if (this.closed || !connection.usable()) return this.discard(state, connection, { polite: connection.usable() });
    this.reuse(state, connection);
  }

  /** A connection ready for the next transaction: idle, until dispatch() gives it to a waiter; past its reuse limits, closed. */
  private reuse(state: DestinationState, connection: Connection): void {
    if (!this.mayReuse(connection)) return this.discard(state, connection, { polite: true });
    state.idle.push(connection);
    connection.startIdleTimer(this.idleTimeoutMs, () => {
      state.idle.splice(state.idle.indexOf(connection), 1);
      this.discard(state, connection, { polite: true });
    });
    this.dispatch();
  }

  /**
   * Whether a connection may carry another transaction: not once it has carried
   * `maxMessagesPerConnection`, nor once it has been open longer than `reuseTimeLimitMs` (Postfix's
   * smtp_connection_reuse_count_limit and smtp_connection_reuse_time_limit). Checked after each
   * transaction, where a connection would go idle and where an idle one is taken: one in steady
   * use is retired after the transaction that passes a limit, and the next send dials what DNS
   * says now.
   */
  private mayReuse(connection: Connection): boolean {
    return connection.transactions < this.maxMessagesPerConnection && this.now() - connection.openedAt <= this.reuseTimeLimitMs;
  }

  /** Follows a connection for its whole life: one that dies while idle leaves the pool. */
  private watch(state: DestinationState, connection: Connection): void {
    connection.onGone(() => {
      const at = state.idle.indexOf(connection);
      if (at === -1) return; // in use: its transaction reports the failure, release() discards it
      state.idle.splice(at, 1);
      connection.stopIdleTimer();
      this.connectionGone(state);
    });
  }

  private discard(state: DestinationState, connection: Connection, options: { polite: boolean }): void {
    connection.end(options.polite);
    this.connectionGone(state);
  }

  /**
   * A connection (or an attempt at one) is over, and its place free. When an attempt failed and
   * nothing else is open or opening, the destination is down for now: the waiters get the same
   * failure at once instead of each repeating it (a host that drops SYNs would otherwise cost
   * every waiter a full connect timeout, one after another). When others are, the waiters wait
   * for those (`failing`: no new attempt) rather than each try a host that just failed; any
   * connection that opens, or ends after use, makes room for new ones again.
   */
  private connectionGone(state: DestinationState, options: { failWaitersWith?: TransactionResult } = {}): void {
    state.open--;
    state.failing = options.failWaitersWith !== undefined && state.open > 0;
    if (options.failWaitersWith && state.open === 0) {
      for (const waiter of state.waiters.splice(0)) waiter.grant({ kind: "failure", failure: options.failWaitersWith });
    }
    if (state.open === 0 && state.waiters.length === 0) {
      this.destinations.delete(state.key);
      state.onDrained?.();
    }
    this.dispatch();
  }

  /** A new session with the first address that takes one; the last failure when none does. */
  private async open(destination: SmtpDestination): Promise<{ connection: Connection } | { failure: TransactionResult }> {
    let failure: TransactionResult | null = null;
    for (const address of destination.addresses) {
      let opened = await connect(destination, address, this.settings, { ignoreTls: false, openedAt: this.now() });
      // Opportunistic TLS: a failed handshake ends the connection, so the plaintext session
      // needs a new one, tried once (Postfix's `may` level does the same).
      if ("failure" in opened && opened.tlsFailed && destination.tls === "opportunistic") {
        opened = await connect(destination, address, this.settings, { ignoreTls: true, openedAt: this.now() });
      }
      if ("connection" in opened) return opened;
      failure = opened.failure;
    }
    return { failure: failure ?? connectFailure(destination, null, "has no address to connect to", "4.4.1") };
  }
}

/**
 * A destination's connections and line. It lives as long as either does, which under steady
 * traffic is indefinitely, so it keeps no SmtpDestination: one kept from the send that created
 * it would have every later connection dial that send's DNS answer, long after its TTL. Each
 * send passes its own, and a connection it opens goes there.
 */
interface DestinationState {
  key: string;
  /** Connections open, opening or idle. Never above the cap. */
  open: number;
  idle: Connection[];
  /** Sends waiting for a turn, in order of arrival. */
  waiters: Waiter[];
  /** The last attempt to connect failed while others were open or opening: no new one until one opens or ends. */
  failing: boolean;
  onDrained: (() => void) | null;
}

interface Waiter {
  /** Its place in the pool-wide order of arrival. */
  turn: number;
  grant(ticket: Ticket): void;
}

/**
 * A waiter's turn: a transaction slot with an idle connection, or with room to open one; or the
 * failure it shares with its destination; or the pool's shutdown, which each waiter reports as a
 * deferral for its own destination.
 */
type Ticket = { kind: "connection"; connection: Connection } | { kind: "room" } | { kind: "failure"; failure: TransactionResult } | { kind: "shutdown" };
type Lease = { connection: Connection; reused: boolean } | { failure: TransactionResult };

/** No reply and no complete message: the connection failed before the transaction got anywhere. */
function isBroken(result: TransactionResult): boolean {
  return result.outcome === "deferred" && !result.answered && !result.payloadSent;
}

/** One SMTP session and what the pool needs to know about it. */
class Connection {
  /** Transactions begun on it (MAIL commands sent). */
  transactions = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private gone = false;
  private readonly goneListeners = new Set<() => void>();

  constructor(
    readonly smtp: SMTPConnection,
    readonly remoteHost: string,
    /** When it was dialled (the pool's clock); its age is counted from here, as Postfix does. */
    readonly openedAt: number,
  ) {
    // SMTPConnection emits 'error' (an EventEmitter throws when nobody listens) and 'end' for
    // any connection that dies, in use or idle: a timeout, the server closing, a reset.
    const onGone = () => {
      if (this.gone) return;
      this.gone = true;
      for (const listener of this.goneListeners) listener();
    };
    smtp.on("error", onGone);
    smtp.on("end", onGone);
  }

  usable(): boolean {
    return !this.gone && !this.smtp.destroyed;
  }

  onGone(listener: () => void): () => void {
    this.goneListeners.add(listener);
    return () => this.goneListeners.delete(listener);
  }

  /** RSET; false when it fails or the connection dies meanwhile (nodemailer then never calls back). */
  reset(done: (ok: boolean) => void): void {
    if (!this.usable()) return done(false);
    let finished = false;
    const finish = (ok: boolean) => {
      if (finished) return;
      finished = true;
      stopWatching();
      done(ok);
    };
    const stopWatching = this.onGone(() => finish(false));
    this.smtp.reset((error) => finish(!error));
  }

  startIdleTimer(ms: number, onIdle: () => void): void {
    this.idleTimer = setTimeout(onIdle, ms);
    // An idle connection must not keep a finished process alive.
    this.idleTimer.unref();
  }

  stopIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** QUIT (polite) or just close. */
  end(polite: boolean): void {
    this.stopIdleTimer();
    this.gone = true;
    if (polite && !this.smtp.destroyed) this.smtp.quit();
    else this.smtp.close();
  }
}

/**
 * nodemailer times the connection, the greeting and a STARTTLS handshake as wholes (within
 * SMTP_CONNECT_TIMEOUT_MS), but every later reply only by inactivity (socketTimeout): a server
 * that sends one line of a multi-line reply every few seconds, up to nodemailer's 1 MiB, would
 * hold the connection, its transaction slot and a shutdown for days. Any domain's owner can run
 * such a server and have mail sent to it. So the session's setup and each transaction are limited
 * as wholes to the sum of their phases' limits (and the message's transfer at 10 KiB/s): a server
 * that keeps to each phase's limit is not cut short, and one that does not is cut off at that sum.
 */
// After the greeting: EHLO, STARTTLS, EHLO again, and AUTH's round trips (three for LOGIN).
const SETUP_REPLIES = 6;
// The replies to MAIL, RCPT and DATA, the message data, the reply to its final dot.
const TRANSACTION_PHASES = 5;
// The data phase's limit is inactivity, so a large message on a slow path takes longer than one
// phase while keeping to it: each transaction may also take a second per this many bytes.
const SLOWEST_TRANSFER_BYTES_PER_S = 10 * 1024;

const setupLimitMs = (settings: SmtpPoolSettings) => settings.connectTimeoutMs + SETUP_REPLIES * settings.commandTimeoutMs;
const transactionLimitMs = (settings: SmtpPoolSettings, bytes: number) => TRANSACTION_PHASES * settings.commandTimeoutMs + Math.ceil((bytes / SLOWEST_TRANSFER_BYTES_PER_S) * 1000);

/** Opens a session: TCP (or TLS), greeting, EHLO, STARTTLS, AUTH. */
function connect(
  destination: SmtpDestination,
  address: string,
  settings: SmtpPoolSettings,
  options: { ignoreTls: boolean; openedAt: number },
): Promise<{ connection: Connection } | { failure: TransactionResult; tlsFailed: boolean }> {
  const remoteHost = describeHost(destination, address);
  const verified = destination.tls !== "opportunistic";
  const smtp = new SMTPConnection({
    host: address,
    port: destination.port,
    name: settings.hostname,
    // SNI, and the name a verified certificate is checked against (the address may be an IP).
    servername: isIP(destination.hostname) ? undefined : destination.hostname,
    secure: destination.tls === "implicit",
    ignoreTLS: options.ignoreTls,
    requireTLS: destination.tls === "require-starttls",
    // A STARTTLS that the server answers with an error goes on in plaintext on the same connection.
    opportunisticTLS: destination.tls === "opportunistic",
    tls: verified
      ? { ...destination.tlsOptions }
      : {
          rejectUnauthorized: false,
          // Any encryption beats plaintext here (RFC 7435 §3), so old servers that speak only
          // TLS 1.0/1.1 are accepted too; OpenSSL 3 needs security level 0 for their handshakes.
          minVersion: "TLSv1",
          ciphers: "DEFAULT@SECLEVEL=0",
          ...destination.tlsOptions,
        },
    connectionTimeout: settings.connectTimeoutMs,
    greetingTimeout: settings.commandTimeoutMs,
    socketTimeout: settings.commandTimeoutMs,
    logger: false,
  });

  return new Promise((resolve) => {
    let stage: SmtpStage = "connect";
    let settled = false;
    const limitMs = setupLimitMs(settings);
    const tooLong = setTimeout(() => fail(Object.assign(new Error(`setting up the session took longer than ${limitMs} ms`), { code: "ETIMEDOUT" })), limitMs);
    const fail = (error: NodemailerError) => {
      if (settled) return;
      settled = true;
      clearTimeout(tooLong);
      const tlsFailed = isTlsFailure(error, smtp);
      smtp.close();
      resolve({ failure: sessionFailure(destination, remoteHost, error, stage, smtp.stage === "connected", tlsFailed && verified), tlsFailed });
    };
    const onError = (error: NodemailerError) => fail(error);
    const onEnd = () => fail(Object.assign(new Error("connection closed"), { code: "ECONNECTION" }));
    // Kept after a failure: a late 'error' with no listener would be thrown.
    smtp.on("error", onError);
    smtp.once("end", onEnd);
    const ready = () => {
      if (settled) return;
      settled = true;
      clearTimeout(tooLong);
      smtp.off("error", onError);
      smtp.off("end", onEnd);
      resolve({ connection: new Connection(smtp, remoteHost, options.openedAt) });
    };
    smtp.connect((error) => {
      if (error) return fail(error);
      if (!destination.auth) return ready();
      stage = "auth";
      smtp.login({ user: destination.auth.user, pass: destination.auth.pass }, (loginError) => (loginError ? fail(loginError) : ready()));
    });
  });
}

/** One transaction on an open session, ended after `limitMs` (transactionLimitMs) whatever the server is doing. */
function transact(connection: Connection, envelope: Envelope, mime: Buffer, limitMs: number): Promise<TransactionResult> {
  connection.transactions++;
  return new Promise((settle) => {
    // Handed over as a stream so that its end tells when the whole message has gone to the
    // socket: a connection lost after that and before the reply may have delivered it.
    let payloadSent = false;
    let settled = false;
    const resolve = (result: TransactionResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(tooLong);
      settle(result);
    };
    const tooLong = setTimeout(() => {
      resolve(transactionFailure(Object.assign(new Error(`the transaction took longer than ${limitMs} ms`), { code: "ETIMEDOUT" }), connection, payloadSent));
      // Not reusable: the server is still in the middle of a reply.
      connection.end(false);
    }, limitMs);
    const body = new PassThrough();
    body.once("end", () => (payloadSent = true));
    body.end(mime);
    connection.smtp.send(
      // SIZE lets the server refuse a too-large message before it is sent (RFC 1870);
      // BODY=8BITMIME declares 8-bit content when there is any (RFC 6152).
      { from: envelope.mailFrom, to: [envelope.rcptTo], size: mime.length, use8BitMime: !isAscii(mime) },
      body,
      (error, info) => {
        if (!error) return resolve(replyResult(info.response, "data", connection.remoteHost, true));
        resolve(transactionFailure(error, connection, payloadSent));
      },
    );
  });
}

function transactionFailure(error: NodemailerError, connection: Connection, payloadSent: boolean): TransactionResult {
  if (error.response && /^\d{3}/.test(error.response)) {
    const stage = commandStage(error.command) ?? (payloadSent ? "data" : "mail");
    return replyResult(error.response, stage, connection.remoteHost, payloadSent);
  }
  if (error.code === "EMESSAGE" && /size/i.test(error.message)) {
    // The server's advertised SIZE limit (RFC 1870 §6.1): it will not take this message, ever.
    return { ...base(connection.remoteHost, "mail", false, false), outcome: "bounced", bounceType: "soft", enhancedStatus: "5.3.4", response: `message too large for ${connection.remoteHost}: ${error.message}` };
  }
  if (error.code === "EENVELOPE" && /^Invalid recipient/.test(error.message)) {
    return { ...base(connection.remoteHost, "rcpt", false, false), outcome: "bounced", bounceType: "hard", enhancedStatus: "5.1.3", response: error.message };
  }
  const what = payloadSent
    ? // RFC 1047: the server may have taken the message and its "250" been lost. Deferred, and
      // the retry carries the same Message-ID, so a duplicate can be recognised.
      `lost connection with ${connection.remoteHost} after the end of the message, before the reply: it may have been delivered (RFC 1047)`
    : `lost connection with ${connection.remoteHost} during the transaction`;
  return { ...base(connection.remoteHost, payloadSent ? "data" : "mail", false, payloadSent), outcome: "deferred", bounceType: null, enhancedStatus: "4.4.2", response: `${what}: ${describeError(error)}` };
}

function sessionFailure(destination: SmtpDestination, remoteHost: string, error: NodemailerError, stage: SmtpStage, connected: boolean, verifiedTlsFailed: boolean): TransactionResult {
  if (verifiedTlsFailed) {
    // No fallback to plaintext where TLS is verified. RFC 3463 X.7.4 "security features not
    // supported" when the server refused STARTTLS, X.7.5 "cryptographic failure" otherwise
    // (a handshake or certificate failure).
    const refusal = error.response && /^\d{3}/.test(error.response) ? parseReply(error.response) : null;
    return refusal
      ? { ...connectFailure(destination, remoteHost, `STARTTLS, which this destination requires, refused by ${remoteHost}: ${refusal.message}`, "4.7.4"), smtpCode: refusal.code }
      : connectFailure(destination, remoteHost, `TLS with ${remoteHost} failed: ${describeError(error)}`, "4.7.5");
  }
  if (error.response && /^\d{3}/.test(error.response)) return replyResult(error.response, stage, remoteHost, false);
  if (stage === "auth") return connectFailure(destination, remoteHost, `authentication at ${remoteHost} failed: ${describeError(error)}`, "4.7.0", "auth");
  return connected
    ? connectFailure(destination, remoteHost, `lost connection with ${remoteHost} while setting up the session: ${describeError(error)}`, "4.4.2")
    : connectFailure(destination, remoteHost, `connect to ${remoteHost}:${destination.port}: ${describeError(error)}`, "4.4.1");
}

/** A deferral without a reply; remoteHost null when no host was tried. */
function connectFailure(destination: SmtpDestination, remoteHost: string | null, response: string, enhancedStatus: string, stage: SmtpStage = "connect"): TransactionResult {
  return { ...base(remoteHost, stage, false, false), outcome: "deferred", bounceType: null, enhancedStatus, response: remoteHost === null ? `${destination.hostname} ${response}` : response };
}

function shutdownResult(destination: SmtpDestination): TransactionResult {
  return connectFailure(destination, null, "was not tried: delivery is shutting down", "4.3.2");
}

/** A reply from the server, classified. */
function replyResult(raw: string, stage: SmtpStage, remoteHost: string, payloadSent: boolean): TransactionResult {
  const reply = parseReply(raw);
  const code = reply.code ?? 0;
  const classified = classifyReply({ code, enhancedStatus: reply.enhancedStatus, message: reply.message, stage });
  return { ...base(remoteHost, stage, true, payloadSent), ...classified, smtpCode: reply.code, response: reply.message };
}

function base(remoteHost: string | null, stage: SmtpStage, answered: boolean, payloadSent: boolean): Omit<TransactionResult, "outcome" | "bounceType" | "enhancedStatus" | "response"> {
  return { smtpCode: null, remoteHost, stage, answered, payloadSent };
}

function commandStage(command: string | undefined): SmtpStage | null {
  if (command === "MAIL FROM") return "mail";
  if (command === "RCPT TO") return "rcpt";
  if (command === "DATA") return "data";
  if (command?.startsWith("AUTH")) return "auth";
  if (command === "EHLO" || command === "HELO" || command === "STARTTLS") return "connect";
  return null;
}

/** "mx1.example.com[192.0.2.1]" (Postfix's notation), or the name alone when it is the address. */
function describeHost(destination: SmtpDestination, address: string): string {
  return address === destination.hostname ? address : `${destination.hostname}[${address}]`;
}

function describeError(error: NodemailerError): string {
  const code = error.originalCode ?? error.code;
  const message = error.message.replace(/\s+/g, " ").trim();
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

// Node's TLS and OpenSSL errors: certificate checks (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT,
// UNABLE_TO_VERIFY_LEAF_SIGNATURE, ERR_TLS_CERT_ALTNAME_INVALID, ...) and handshake failures (ERR_SSL_*).
const TLS_ERROR_CODE = /^(ERR_SSL_|ERR_TLS_)|CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/;

function isTlsFailure(error: NodemailerError, smtp: SMTPConnection): boolean {
  return error.code === "ETLS" || smtp.upgrading === true || TLS_ERROR_CODE.test(error.originalCode ?? "") || TLS_ERROR_CODE.test(error.code ?? "");
}

/** The transport-neutral part of a result (what MailTransport.send returns). */
export function toSendResult(result: TransactionResult): SendResult {
  const { outcome, bounceType, smtpCode, enhancedStatus, response, remoteHost } = result;
  return { outcome, bounceType, smtpCode, enhancedStatus, response, remoteHost };
}
