import { describe, expect, it } from "vitest";
import { splitAddressList } from "../src/commands/message-flags.js";

describe("splitAddressList (--to, --cc, --bcc, --reply-to)", () => {
  it("splits a comma-separated list and trims each address", () => {
    expect(splitAddressList("ada@example.com, grace@example.com ,alan@example.com")).toEqual(["ada@example.com", "grace@example.com", "alan@example.com"]);
  });

  it("keeps a quoted display name that contains a comma whole", () => {
    expect(splitAddressList('"Lovelace, Ada" <ada@example.com>, grace@example.com')).toEqual(['"Lovelace, Ada" <ada@example.com>', "grace@example.com"]);
  });

  it("does not split inside angle brackets", () => {
    expect(splitAddressList("Ada <ada@example.com>, Grace <grace@example.com>")).toEqual(["Ada <ada@example.com>", "Grace <grace@example.com>"]);
  });

  it("answers a single address as it is", () => {
    expect(splitAddressList("Ada Lovelace <ada@example.com>")).toEqual(["Ada Lovelace <ada@example.com>"]);
  });

  it("leaves empty parts for the caller to drop", () => {
    expect(splitAddressList("ada@example.com,,")).toEqual(["ada@example.com", "", ""]);
  });
});
