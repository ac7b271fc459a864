import { describe, expect, it } from "vitest";
import { addressKey, formatMailbox, normaliseAddress, parseMailbox } from "../../src/domain/addresses.js";

describe("parseMailbox", () => {
  it.each([
    ["ada@example.com", { address: "ada@example.com", name: null }],
    ["Ada Lovelace <ada@example.com>", { address: "ada@example.com", name: "Ada Lovelace" }],
    ['"Lovelace, Ada" <ada@example.com>', { address: "ada@example.com", name: "Lovelace, Ada" }],
    ["  Ada <Ada.L+news@EXAMPLE.com>  ", { address: "Ada.L+news@example.com", name: "Ada" }],
    ["ada@bücher.example", { address: "ada@xn--bcher-kva.example", name: null }],
  ])("reads %s", (input, mailbox) => {
    expect(parseMailbox(input)).toEqual({ ok: true, mailbox });
  });

  it.each(["ada", "ada@", "@example.com", "ada@localhost", "ada@@example.com", "a da@example.com", "ada@exa_mple.com", "ada@1.2.3.4", "ada..x@example.com", `${"a".repeat(65)}@example.com`])(
    "refuses %s",
    (input) => {
      expect(parseMailbox(input).ok).toBe(false);
    },
  );

  it("refuses header injection in the display name", () => {
    expect(parseMailbox("Ada\r\nBcc: eve@example.com <ada@example.com>")).toEqual({ ok: false, reason: "must not contain CR, LF or NUL" });
  });

  it.each(["Ada\u0007Bell <ada@example.com>", '"Ada\u001bBell" <ada@example.com>'])("refuses a control character in the display name, which the header would drop: %j", (input) => {
    expect(parseMailbox(input)).toEqual({ ok: false, reason: "the display name must not contain control characters (U+0001 to U+001F, other than tab)" });
  });

  it("keeps a tab and DEL in the display name, which the header carries encoded", () => {
    expect(parseMailbox("Ada\tBell\u007f <ada@example.com>")).toEqual({ ok: true, mailbox: { address: "ada@example.com", name: "Ada\tBell\u007f" } });
  });

  it("says that the part before @ must be ASCII: Mailroom does not send SMTPUTF8 mail", () => {
    expect(parseMailbox("josé@bücher.example")).toEqual({ ok: false, reason: '"josé@bücher.example" is not a valid email address: the part before @ must be ASCII (mail to UTF-8 mailboxes, SMTPUTF8, is not sent)' });
  });
});

describe("normaliseAddress", () => {
  it("lower-cases the domain and keeps the local part", () => {
    expect(normaliseAddress("Ada@Example.COM")).toBe("Ada@example.com");
  });

  // Node's domainToASCII reads a URL host: it would drop what follows these, or decode %xx, and
  // so turn junk into another, valid-looking address (u@evil.example\acme.example to evil.example).
  it.each(["ada@acme.example/x", "ada@acme.example?x", "ada@acme.example#x", "ada@acme.example\\x", "ada@exa%6dple.com", "u@evil.example\\acme.example", "ada@acme.example:25", "ada@acme.example."])(
    "refuses %j rather than rewrite it",
    (input) => {
      expect(normaliseAddress(input)).toBeNull();
    },
  );
});

describe("addressKey", () => {
  it("is one key for the address in any case, its domain in Unicode or in ASCII", () => {
    expect(new Set(["Joerg@Bücher.example", " JOERG@BÜCHER.EXAMPLE ", "joerg@xn--bcher-kva.example"].map(addressKey))).toEqual(new Set(["joerg@xn--bcher-kva.example"]));
  });

  it("only trims and lower-cases what is not an address, so a search for it finds nothing", () => {
    expect(addressKey(" Not An Address@ ")).toBe("not an address@");
  });
});

describe("formatMailbox", () => {
  it("quotes display names that need it", () => {
    expect(formatMailbox({ address: "ada@example.com", name: "Ada" })).toBe("Ada <ada@example.com>");
    expect(formatMailbox({ address: "ada@example.com", name: 'Lovelace, "Ada"' })).toBe('"Lovelace, \\"Ada\\"" <ada@example.com>');
    expect(formatMailbox({ address: "ada@example.com", name: null })).toBe("ada@example.com");
  });
});
