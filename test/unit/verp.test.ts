import { describe, expect, it } from "vitest";
import { secretKeys } from "../../src/domain/secret-keys.js";
import { Verp } from "../../src/domain/verp.js";

const verp = new Verp(secretKeys("ab".repeat(32)));
const messageId = "msg_01jd3k8m2q5v7w9x1y3z5a7b9c";

describe("Verp", () => {
  it("names the message and the recipient in the return path, and reads them back", () => {
    const address = verp.returnPath({ messageId, position: 3 }, "bounces.acme.example");
    expect(address).toMatch(/^bounces\+msg_01jd3k8m2q5v7w9x1y3z5a7b9c-3-[0-9a-f]{10}@bounces\.acme\.example$/);
    expect(verp.parse(address)).toEqual({ messageId, position: 3 });
  });

  it("reads an address whose local part a remote MTA upper-cased", () => {
    expect(verp.parse(verp.returnPath({ messageId, position: 0 }, "b.example").toUpperCase())).toEqual({ messageId, position: 0 });
  });

  it("reads return paths and reply addresses made under a key listed in SECRET_KEY_PREVIOUS, and makes new ones with SECRET_KEY", () => {
    const rotated = new Verp(secretKeys("cd".repeat(32), ["ab".repeat(32)]));
    expect(rotated.parse(verp.returnPath({ messageId, position: 1 }, "b.example"))).toEqual({ messageId, position: 1 });
    expect(rotated.parseReply(verp.replyAddress(messageId, "b.example"))).toEqual({ messageId });
    expect(verp.parse(rotated.returnPath({ messageId, position: 1 }, "b.example"))).toBeNull();
    expect(new Verp(secretKeys("cd".repeat(32))).parse(verp.returnPath({ messageId, position: 1 }, "b.example"))).toBeNull();
  });

  it("refuses a forged or altered tag, another recipient's position, and other keys' addresses", () => {
    const address = verp.returnPath({ messageId, position: 1 }, "b.example");
    expect(verp.parse(address.replace("-1-", "-2-"))).toBeNull();
    expect(verp.parse(address.replace(/-[0-9a-f]{10}@/, "-0000000000@"))).toBeNull();
    expect(verp.parse(new Verp(secretKeys("cd".repeat(32))).returnPath({ messageId, position: 1 }, "b.example"))).toBeNull();
    expect(verp.parse("ada@example.com")).toBeNull();
  });

  it("gives each message a reply address that names it, and reads it back whatever the case", () => {
    const address = verp.replyAddress(messageId, "bounces.acme.example");
    expect(address).toMatch(/^reply\+msg_01jd3k8m2q5v7w9x1y3z5a7b9c-[0-9a-f]{10}@bounces\.acme\.example$/);
    expect(verp.parseReply(address)).toEqual({ messageId });
    expect(verp.parseReply(address.toUpperCase())).toEqual({ messageId });
  });

  it("refuses a forged reply tag, a bounce address as a reply address, and another key's reply address", () => {
    const address = verp.replyAddress(messageId, "b.example");
    expect(verp.parseReply(address.replace(/-[0-9a-f]{10}@/, "-0000000000@"))).toBeNull();
    expect(verp.parseReply(verp.returnPath({ messageId, position: 0 }, "b.example"))).toBeNull();
    expect(verp.parse(address)).toBeNull();
    expect(verp.parseReply(new Verp(secretKeys("cd".repeat(32))).replyAddress(messageId, "b.example"))).toBeNull();
  });
});
