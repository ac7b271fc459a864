import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { secretKeys } from "../../src/domain/secret-keys.js";
import { Verp } from "../../src/domain/verp.js";
import type { MessageRecord } from "../../src/db/repositories/messages.js";
import { MAX_TRACKED_LINKS, TrackingLinks } from "../../src/tracking/links.js";
import { TrackingTokens } from "../../src/tracking/tokens.js";

const SECRET = "ab".repeat(32);
const messageId = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c";

function setup(base = "https://t.mail.example") {
  const clock = new ManualClock(Date.parse("2026-11-21T10:00:00Z"));
  const tokens = new TrackingTokens(secretKeys(SECRET), clock);
  return { clock, tokens, links: new TrackingLinks(tokens, base, new Verp(secretKeys(SECRET))) };
}

/** Only what TrackingLinks reads of a message. */
function aMessage(html: string, changes: Partial<MessageRecord> = {}): MessageRecord {
  return {
    id: messageId,
    scope: { workspaceId: "ws_01jd3k8m2q5v7w9x1y3z5a7b9c", environment: "live" },
    from: "Acme <hello@acme.example>",
    reply_to: [],
    html,
    tracking: { opens: false, clicks: true, replies: false, unsubscribe: false },
    recipients: [],
    ...changes,
  } as unknown as MessageRecord;
}

const clickHrefs = (html: string) => [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!);

describe("TrackingLinks", () => {
  it("leaves links past the per-message cap as they are", () => {
    const { links } = setup();
    const extra = 5;
    const html = Array.from({ length: MAX_TRACKED_LINKS + extra }, (_, i) => `<a href="https://shop.example/${i}">${i}</a>`).join("\n");
    const out = links.parts(aMessage(html), 0, null).html!;
    const hrefs = clickHrefs(out);
    expect(hrefs).toHaveLength(MAX_TRACKED_LINKS + extra);
    expect(hrefs.slice(0, MAX_TRACKED_LINKS).every((href) => href.startsWith("https://t.mail.example/t/c/"))).toBe(true);
    expect(hrefs.slice(MAX_TRACKED_LINKS)).toEqual(Array.from({ length: extra }, (_, i) => `https://shop.example/${MAX_TRACKED_LINKS + i}`));
  });

  it("keeps a message full of short links near its size: only the first links grow", () => {
    const { links } = setup();
    const unit = `<a href=http://a.co>x</a>`;
    const html = unit.repeat(Math.floor(2_000_000 / unit.length));
    const out = links.parts(aMessage(html), 0, null).html!;
    // Each tracked link's href grows by its token (~150 bytes here); the rest are byte for byte as written.
    expect(out.length - html.length).toBeLessThan(MAX_TRACKED_LINKS * 200);
    expect(out.endsWith(unit.repeat(10))).toBe(true);
  });

  it("does not count links it leaves alone (too long, or marked not to track) towards the cap", () => {
    const { links } = setup();
    const untracked = `<a href="https://shop.example/${"x".repeat(2100)}">long</a><a data-mailroom-track="false" href="https://shop.example/no">no</a>`;
    const html = untracked + Array.from({ length: MAX_TRACKED_LINKS }, (_, i) => `<a href="https://shop.example/${i}">${i}</a>`).join("");
    const hrefs = clickHrefs(links.parts(aMessage(html), 0, null).html!);
    expect(hrefs.filter((href) => href.startsWith("https://t.mail.example/t/c/"))).toHaveLength(MAX_TRACKED_LINKS);
  });

  it("binds each click token to the host its link names: the tracking domain, else the tracking base URL's", () => {
    const { tokens, links } = setup("https://T.Mail.Example");
    const html = `<a href="https://shop.example/">shop</a>`;
    const token = (out: string) => clickHrefs(out)[0]!.split("/t/c/")[1]!;
    const viaBase = token(links.parts(aMessage(html), 0, null).html!);
    expect(tokens.verifyClick(viaBase, "t.mail.example")).toMatchObject({ messageId, position: 0, url: "https://shop.example/", sandbox: false });
    expect(tokens.verifyClick(viaBase, "t.mail.example:443")).not.toBeNull();
    expect(tokens.verifyClick(viaBase, "track.other.example")).toBeNull();
    const viaDomain = token(links.parts(aMessage(html), 0, { returnPathDomain: "bounces.acme.example", trackingDomain: "track.acme.example" }).html!);
    expect(tokens.verifyClick(viaDomain, "track.acme.example")).not.toBeNull();
    expect(tokens.verifyClick(viaDomain, "t.mail.example")).toBeNull();
    // A sandbox message's clicks say so: they are answered with a page, not a redirect.
    const sandbox = token(links.parts(aMessage(html, { scope: { workspaceId: "ws_01jd3k8m2q5v7w9x1y3z5a7b9c", environment: "sandbox" } }), 0, null).html!);
    expect(tokens.verifyClick(sandbox, "t.mail.example")).toMatchObject({ sandbox: true });
  });

  it("adds List-Unsubscribe-Post only when the unsubscribe URL is https (RFC 8058 §3.1)", () => {
    const unsubscribing = aMessage("<p>Hi</p>", { tracking: { opens: false, clicks: false, replies: false, unsubscribe: true } });
    const identity = { returnPathDomain: "bounces.acme.example", trackingDomain: null };
    const overHttps = setup("https://t.mail.example").links.parts(unsubscribing, 0, identity).headers;
    expect(overHttps["List-Unsubscribe"]).toMatch(/^<https:\/\/t\.mail\.example\/t\/u\/[A-Za-z0-9_-]+>, <mailto:unsubscribe\+/);
    expect(overHttps["List-Unsubscribe-Post"]).toBe("List-Unsubscribe=One-Click");
    const overHttp = setup("http://localhost:3000").links.parts(unsubscribing, 0, identity).headers;
    expect(overHttp["List-Unsubscribe"]).toMatch(/^<http:\/\/localhost:3000\/t\/u\//);
    expect(overHttp["List-Unsubscribe-Post"]).toBeUndefined();
    // A tracking domain's links are https whatever the base URL is.
    expect(setup("http://localhost:3000").links.parts(unsubscribing, 0, { ...identity, trackingDomain: "track.acme.example" }).headers["List-Unsubscribe-Post"]).toBe("List-Unsubscribe=One-Click");
  });
});
