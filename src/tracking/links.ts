import { formatMailbox, parseMailbox } from "../domain/addresses.js";
import type { Verp } from "../domain/verp.js";
import type { MessageRecord } from "../db/repositories/messages.js";
import { MAX_TRACKED_URL_BYTES, type TrackingTokens } from "./tokens.js";
import { applyRewrite, planRewrite, type RewritePlan } from "./html.js";

/** The public tracking routes (src/http/tracking-routes.ts), each followed by a token. */
export const TRACKING_PATHS = { open: "/t/o/", click: "/t/c/", unsubscribe: "/t/u/" } as const;

/**
 * Links tracked per message: the first this many are rewritten, the rest left as written (as
 * URLs over 2,000 bytes are). Each tracked link grows by its token (~150 bytes for a short URL,
 * a third more than the URL for a long one) and costs an HMAC, in every recipient's copy: without
 * a cap, 2 MB of short links became 11.7 MB and 3 s of CPU per recipient. A transactional
 * message has a few dozen links; a thousand bounds a copy's growth to ~150 KB for short links
 * and under 3 MB for the longest.
 */
export const MAX_TRACKED_LINKS = 1000;

/** What the rendering of one message for one recipient changes (src/delivery/render.ts). */
export interface TrackedParts {
  /** The HTML with its open image and rewritten links; null when the message has no HTML. */
  html: string | null;
  /** List-Unsubscribe and List-Unsubscribe-Post, when the message asks for one-click unsubscribe. */
  headers: Record<string, string>;
  /** The message's reply address, when it tracks replies and gave no Reply-To of its own. */
  replyTo: string | null;
}

/** The sending domain as tracking needs it; null for mail from a domain the workspace never added. */
export interface TrackingIdentity {
  returnPathDomain: string;
  trackingDomain: string | null;
}

/**
 * Builds each recipient's tracking: signed URLs under the tracking base URL (the domain's
 * tracking domain over https, else TRACKING_BASE_URL), the rewritten HTML, List-Unsubscribe
 * and the reply address.
 */
export class TrackingLinks {
  /** Each message's HTML parsed once for all its recipients' renderings (held while the message is). */
  private readonly plans = new WeakMap<MessageRecord, { html: string; plan: RewritePlan }>();

  constructor(
    private readonly tokens: TrackingTokens,
    /** TRACKING_BASE_URL: an origin, no trailing slash. */
    private readonly defaultBaseUrl: string,
    private readonly verp: Verp,
  ) {}

  /**
   * Whether each recipient needs a rendering of its own: its tokens are in the HTML and the
   * headers, so a message tracking opens, clicks or unsubscribes for more than one recipient
   * cannot share one signed MIME. Reply tracking alone can: its address is per message.
   */
  static perRecipient(message: MessageRecord): boolean {
    const { opens, clicks, unsubscribe } = message.tracking;
    return (opens || clicks || unsubscribe) && message.recipients.length > 1;
  }

  parts(message: MessageRecord, position: number, identity: TrackingIdentity | null): TrackedParts {
    const { tracking } = message;
    const base = identity?.trackingDomain ? `https://${identity.trackingDomain}` : this.defaultBaseUrl;
    const target = { messageId: message.id, position };
    const url = (path: string, token: string) => `${base}${path}${token}`;
    // Click tokens are bound to the host they are issued for (docs/tracking.md#tokens).
    const host = new URL(base).hostname;
    const sandbox = message.scope.environment === "sandbox";

    let html = message.html;
    if (html !== null && (tracking.opens || tracking.clicks)) {
      html = applyRewrite(html, this.planFor(message, html), {
        pixelUrl: tracking.opens ? url(TRACKING_PATHS.open, this.tokens.issue({ ...target, kind: "open" })) : null,
        clickUrl: tracking.clicks ? (link) => url(TRACKING_PATHS.click, this.tokens.issue({ ...target, kind: "click", url: link, host, sandbox })) : null,
      });
    }

    const headers: Record<string, string> = {};
    if (tracking.unsubscribe) {
      // RFC 8058 §3.1: the https URI takes the one-click POST; the mailto is for clients that
      // only do RFC 2369. Without a return-path domain (sandbox mail from a domain never added)
      // no address of ours would receive the mail, so only the URL is given.
      const links = [`<${url(TRACKING_PATHS.unsubscribe, this.tokens.issue({ ...target, kind: "unsubscribe" }))}>`];
      if (identity) links.push(`<mailto:${this.tokens.unsubscribeMailto(target, identity.returnPathDomain)}?subject=unsubscribe>`);
      headers["List-Unsubscribe"] = links.join(", ");
      // RFC 8058 §3.1: one-click needs an https URI. Over http (a TRACKING_BASE_URL left to its
      // development default) the URL is still offered, as a page with a button, without the claim.
      if (base.startsWith("https://")) headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click";
    }

    let replyTo: string | null = null;
    if (tracking.replies && message.reply_to.length === 0 && identity) {
      const from = parseMailbox(message.from);
      replyTo = formatMailbox({ address: this.verp.replyAddress(message.id, identity.returnPathDomain), name: from.ok ? from.mailbox.name : null });
    }
    return { html, headers, replyTo };
  }

  private planFor(message: MessageRecord, html: string): RewritePlan {
    const cached = this.plans.get(message);
    if (cached?.html === html) return cached.plan;
    const plan = planRewrite(html, { maxLinks: MAX_TRACKED_LINKS, maxUrlBytes: MAX_TRACKED_URL_BYTES });
    this.plans.set(message, { html, plan });
    return plan;
  }
}
