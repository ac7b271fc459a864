import { isIPv4 } from "node:net";

/**
 * Is an open or a click likely a machine's rather than a person's (docs/tracking.md#machine-opens-and-clicks)?
 * Heuristics, so the event is recorded either way and only flagged (`machine_open`,
 * `machine_click`, with `machine_reason`); flagged ones do not count in the message's
 * engagement. Opens through Gmail's image proxy are people's opens (Gmail fetches through it
 * when the message is opened), so they count, noted with `proxy: "gmail"`.
 */
export interface Hit {
  method: string;
  userAgent: string | null;
  ip: string | null;
  /** When it happened, and when the token in the link was issued (the message's rendering, just before hand-off). */
  at: number;
  issuedAt: number;
}

export interface Verdict {
  machine: boolean;
  /** Why it looks automated, or null. */
  reason: "apple_privacy_protection" | "image_proxy" | "head_request" | "no_user_agent" | "scanner_user_agent" | "too_soon" | null;
  /** The mailbox provider's image proxy it came through, if any. */
  proxy: "apple" | "gmail" | "yahoo" | null;
}

/** An open this soon after the rendering is a prefetch (a gateway or proxy fetching on receipt). */
export const OPEN_TOO_SOON_MS = 2_000;
/**
 * A click this soon after the rendering is a link scanner: a person cannot receive, open, read
 * and click within it (Microsoft Defender, Mimecast, Proofpoint follow links on receipt).
 */
export const CLICK_TOO_SOON_MS = 5_000;

/**
 * Software that follows links without a person: security gateways, link previewers, HTTP
 * libraries and crawlers. Matched anywhere in the User-Agent, case-insensitively. "…bot" names a
 * crawler (Googlebot, bingbot), except in CUBOT, a phone maker whose model is in its browser's
 * User-Agent (the exception the isbot project makes too).
 */
const SCANNER_AGENTS =
  /(?<!cu)bot\b|crawler|spider|scanner|preview|headless|python|curl\/|wget|go-http-client|java\/|okhttp|libwww|httpclient|axios|node-fetch|undici|barracuda|mimecast|proofpoint|symantec|trend ?micro|forcepoint|zscaler|ironport|cisco|fireeye|sophos|safelinks|msnbot|bingpreview|slackbot|facebookexternalhit|twitterbot|linkedinbot|whatsapp|skypeuripreview|googleimageproxy|yahoomailproxy/i;

export function classifyOpen(hit: Hit): Verdict {
  const agent = hit.userAgent?.trim() ?? "";
  // Apple Mail Privacy Protection prefetches every image through Apple's proxies, on receipt,
  // with the bare User-Agent "Mozilla/5.0" from Apple's 17.0.0.0/8.
  if (agent === "Mozilla/5.0" || fromApple(hit.ip)) return { machine: true, reason: "apple_privacy_protection", proxy: "apple" };
  // Yahoo's proxy fetches on receipt too; Gmail's when the message is opened.
  if (/YahooMailProxy/i.test(agent)) return { machine: true, reason: "image_proxy", proxy: "yahoo" };
  if (/GoogleImageProxy/i.test(agent)) return { machine: false, reason: null, proxy: "gmail" };
  return common(hit, agent, OPEN_TOO_SOON_MS);
}

export function classifyClick(hit: Hit): Verdict {
  return common(hit, hit.userAgent?.trim() ?? "", CLICK_TOO_SOON_MS);
}

function common(hit: Hit, agent: string, tooSoonMs: number): Verdict {
  const machine = (reason: NonNullable<Verdict["reason"]>): Verdict => ({ machine: true, reason, proxy: null });
  // Browsers follow a link with GET; scanners often check it with HEAD first.
  if (hit.method === "HEAD") return machine("head_request");
  if (agent === "") return machine("no_user_agent");
  if (SCANNER_AGENTS.test(agent)) return machine("scanner_user_agent");
  // Token times are whole seconds (rounded down): the margin only ever makes this more lenient.
  if (hit.at - hit.issuedAt < tooSoonMs) return machine("too_soon");
  return { machine: false, reason: null, proxy: null };
}

function fromApple(ip: string | null): boolean {
  if (ip === null) return false;
  const v4 = ip.startsWith("::ffff:") ? ip.slice(7) : ip;
  return isIPv4(v4) && v4.startsWith("17.");
}
