import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { allSecretKeys, type SecretKeys } from "./secret-keys.js";

/**
 * VERP return paths (DESIGN.md §9): each recipient's envelope sender is
 * `bounces+<token>@<return-path domain>`, so a bounce that comes back names the message and the
 * recipient it is about even when its body is unparseable. The token is
 * `<message id>-<recipient position>-<tag>`, all lower-case (ids are; some MTAs fold local parts), where the
 * tag is an HMAC: a forged bounce cannot suppress an address it did not send to.
 */
export interface VerpTarget {
  messageId: string;
  position: number;
}

const TAG_LENGTH = 10; // hex characters: 40 bits, far beyond what guessing by mail can reach

export class Verp {
  /** From SECRET_KEY, then SECRET_KEY_PREVIOUS: addresses in mail sent before a rotation still parse. */
  private readonly keys: Buffer[];

  constructor(secretKeys: SecretKeys) {
    this.keys = allSecretKeys(secretKeys).map((hex) => Buffer.from(hkdfSync("sha256", Buffer.from(hex, "hex"), Buffer.alloc(0), "mailroom:verp", 32)));
  }

  returnPath(target: VerpTarget, returnPathDomain: string): string {
    const id = target.messageId;
    return `bounces+${id}-${target.position}-${this.tag(id, target.position)}@${returnPathDomain}`;
  }

  /** The message and recipient a bounce address names, or null when it is not one of ours. */
  parse(address: string): VerpTarget | null {
    const match = /^bounces\+([a-z]+_[0-9a-z]{26})-(\d{1,3})-([0-9a-f]+)@/i.exec(address);
    if (!match) return null;
    const id = match[1]!.toLowerCase();
    const position = Number(match[2]);
    return this.matches(match[3]!, id, position) ? { messageId: id, position } : null;
  }

  /**
   * A message's reply address, `reply+<message id>-<tag>@<return-path domain>`: the same MX
   * that takes its bounces takes its replies, so no other DNS record is needed. One address per
   * message (the MIME is shared by its recipients); the reply's From tells which one answered.
   */
  replyAddress(messageId: string, returnPathDomain: string): string {
    return `reply+${messageId}-${this.tag(messageId, "reply")}@${returnPathDomain}`;
  }

  /** The message a reply address names, or null when it is not one of ours. */
  parseReply(address: string): { messageId: string } | null {
    const match = /^reply\+([a-z]+_[0-9a-z]{26})-([0-9a-f]+)@/i.exec(address);
    if (!match) return null;
    const id = match[1]!.toLowerCase();
    return this.matches(match[2]!, id, "reply") ? { messageId: id } : null;
  }

  /** Whether `given` is the tag of (id, position) under any of the keys. */
  private matches(given: string, id: string, position: number | "reply"): boolean {
    const a = Buffer.from(given.toLowerCase());
    return this.keys.some((key) => {
      const b = Buffer.from(this.tag(id, position, key));
      return a.length === b.length && timingSafeEqual(a, b);
    });
  }

  private tag(id: string, position: number | "reply", key = this.keys[0]!): string {
    return createHmac("sha256", key).update(`${id}:${position}`).digest("hex").slice(0, TAG_LENGTH);
  }
}
