import type { Clock } from "../domain/clock.js";
import { classifyClick, classifyOpen, type Verdict } from "../tracking/machine.js";
import type { TrackingTarget, TrackingTokens } from "../tracking/tokens.js";
import type { EngagementInput, EngagementOutcome } from "./engagement.js";

/** Who fetched a tracking URL, as the HTTP layer saw it. */
export interface Visitor {
  method: string;
  userAgent: string | null;
  ip: string | null;
}

/** How the recipient unsubscribed: the RFC 8058 POST, the confirmation page's button, or mail to the mailto. */
export type UnsubscribeMethod = "one_click" | "page" | "mailto";

export interface EngagementRecorder {
  record(input: EngagementInput): Promise<EngagementOutcome | null>;
}

export interface TrackingServiceSettings {
  /** How long an open or click waits for its event to be stored before answering anyway. */
  recordWaitMs: number;
  /**
   * The host of TRACKING_BASE_URL: a click link issued for it but presented at another host is
   * logged, as a reverse proxy that rewrites `Host` makes every such link a 404.
   */
  baseHost?: string;
}

/**
 * The public tracking endpoints' decisions (docs/tracking.md): which token is good, where a
 * click goes, what an open or click looks like (person or machine), and recording each through
 * the engagement core. The signed token is the only authority: no session, cookie or tenant.
 */
export class TrackingService {
  constructor(
    private readonly tokens: TrackingTokens,
    private readonly engagement: EngagementRecorder,
    private readonly clock: Clock,
    private readonly log: { error(obj: object, msg: string): void; warn?(obj: object, msg: string): void },
    private readonly settings: TrackingServiceSettings = { recordWaitMs: 2000 },
  ) {}

  /** Records an open; false when the token is not one of ours (the route answers 404). */
  async open(token: string, visitor: Visitor): Promise<boolean> {
    const claims = this.tokens.verify(token, "open");
    if (!claims) return false;
    const at = this.clock.now();
    const verdict = classifyOpen({ ...visitor, at, issuedAt: claims.issuedAt });
    await this.recordQuietly(claims, at, "message.opened", { ...this.visitorData(visitor), machine_open: verdict.machine, ...this.why(verdict) }, !verdict.machine);
    return true;
  }

  /**
   * Where a click token leads, with the click recorded; null when the token is not one of ours
   * or was issued for another host than `host`, the one the request was made to. The URL comes
   * only from the signed token, and only at the host its link named, so this is never an open
   * redirect. `sandbox`: a sandbox message's link, to be shown rather than followed.
   */
  async click(token: string, host: string, visitor: Visitor): Promise<{ url: string; sandbox: boolean } | null> {
    const claims = this.tokens.verifyClick(token, host);
    if (!claims) {
      this.noteMisdirected(token, host);
      return null;
    }
    const at = this.clock.now();
    const verdict = classifyClick({ ...visitor, at, issuedAt: claims.issuedAt });
    await this.recordQuietly(claims, at, "message.clicked", { url: claims.url, ...this.visitorData(visitor), machine_click: verdict.machine, ...this.why(verdict) }, !verdict.machine);
    return { url: claims.url, sandbox: claims.sandbox };
  }

  /**
   * A link of ours issued for the tracking base host but presented at another: most likely a
   * reverse proxy that sets `Host` to its upstream (nginx's default), which turns every click into
   * a 404 (docs/deployment.md). Said in the log, where the operator looks; the reader sees a 404.
   */
  private noteMisdirected(token: string, host: string): void {
    const { baseHost } = this.settings;
    if (baseHost === undefined || baseHost === host.toLowerCase() || !this.tokens.verifyClick(token, baseHost)) return;
    this.log.warn?.({ host, issued_for: baseHost }, "a click link was presented at another host than the one it was issued for: does the reverse proxy pass Host (or X-Forwarded-Host from a TRUST_PROXY address)?");
  }

  /** Whether an unsubscribe token is good (the confirmation page is shown, nothing recorded). */
  checkUnsubscribe(token: string): boolean {
    return this.tokens.verify(token, "unsubscribe") !== null;
  }

  /**
   * Unsubscribes the token's recipient: suppressed in the message's environment (reason
   * unsubscribe) and `message.unsubscribed` emitted, in one transaction; repeating it changes
   * nothing while the suppression stands (once deleted, it suppresses again, with a new event).
   * False when the token is not one of ours. Unlike opens and clicks this waits for
   * the store and fails loudly: a 200 here promises the address will get no more mail.
   */
  async unsubscribe(token: string, method: Exclude<UnsubscribeMethod, "mailto">, visitor: Visitor): Promise<boolean> {
    const claims = this.tokens.verify(token, "unsubscribe");
    if (!claims) return false;
    await this.engagement.record({
      messageId: claims.messageId,
      recipient: { position: claims.position },
      type: "message.unsubscribed",
      data: { method, ...this.visitorData(visitor) },
      at: this.clock.now(),
      human: true,
    });
    return true;
  }

  /**
   * Opens and clicks are recorded, but a slow or failing database must not hold up the image
   * or the redirect: past `recordWaitMs` the answer goes out and the write finishes on its own;
   * a failure is logged, never shown to the reader.
   */
  private async recordQuietly(claims: TrackingTarget, at: number, type: "message.opened" | "message.clicked", data: Record<string, unknown>, human: boolean): Promise<void> {
    const recording = this.engagement.record({ messageId: claims.messageId, recipient: { position: claims.position }, type, data, at, human }).then(
      () => undefined,
      (error: unknown) => this.log.error({ err: error, message_id: claims.messageId }, `could not record ${type}`),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.settings.recordWaitMs);
    });
    await Promise.race([recording, timeout]);
    clearTimeout(timer);
  }

  private visitorData(visitor: Visitor): Record<string, unknown> {
    return { user_agent: visitor.userAgent, ip: visitor.ip };
  }

  private why(verdict: Verdict): Record<string, unknown> {
    return { ...(verdict.reason ? { machine_reason: verdict.reason } : {}), ...(verdict.proxy ? { proxy: verdict.proxy } : {}) };
  }
}
