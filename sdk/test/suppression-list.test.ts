import { describe, expect, it } from "vitest";
import { MailroomError, readSuppressionList, SuppressionListError } from "../src/index.js";

/**
 * sdk/src/suppression-list.ts: a list brought from another provider, read into
 * createSuppressionBatch's items at their lines: the rules the CLI's `suppressions create-batch`
 * and the dashboard's import share.
 */
describe("readSuppressionList", () => {
  it("reads one address per line, leaving out blank lines and # comments, each with the default reason", () => {
    expect(readSuppressionList("# from the old tool\nada@example.com\n\n  grace@example.com  \n", { defaultReason: "unsubscribe" })).toEqual({
      format: "text",
      rows: [
        { line: 2, body: { email: "ada@example.com", reason: "unsubscribe" } },
        { line: 4, body: { email: "grace@example.com", reason: "unsubscribe" } },
      ],
    });
  });

  it("reads a CSV export by its header's email, reason and detail columns, in any case and order, the default reason where a row gives none", () => {
    const text = ["Created,Detail,EMAIL,Reason", '2026-01-02,"Lovelace, Ada",ada@example.com,Unsubscribe', "2026-01-03,,grace@example.com,"].join("\r\n");
    expect(readSuppressionList(text, { defaultReason: "complaint" })).toEqual({
      format: "csv",
      rows: [
        { line: 2, body: { email: "ada@example.com", reason: "unsubscribe", detail: "Lovelace, Ada" } },
        { line: 3, body: { email: "grace@example.com", reason: "complaint" } },
      ],
    });
  });

  it("leaves out CSV rows with no value in any cell, which spreadsheets export for empty rows, and keeps the lines of the others", () => {
    const text = ["email,reason", ",", "ada@example.com,unsubscribe", ',,', '"",  ', "   ", "grace@example.com,", ",manual", ",,", ",,", ""].join("\r\n");
    expect(readSuppressionList(text).rows).toEqual([
      { line: 3, body: { email: "ada@example.com", reason: "unsubscribe" } },
      { line: 7, body: { email: "grace@example.com" } },
      // A row with a value is sent, address or not, for the API to refuse at its line.
      { line: 8, body: { email: "", reason: "manual" } },
    ]);
  });

  it("takes the first CSV row with a value as the header, below any empty rows", () => {
    expect(readSuppressionList(",,\nEmail,Reason\nada@example.com,\n").rows).toEqual([{ line: 3, body: { email: "ada@example.com" } }]);
  });

  it("leaves the reason out where none is given and no default is asked for (the API's default applies)", () => {
    expect(readSuppressionList("ada@example.com").rows).toEqual([{ line: 1, body: { email: "ada@example.com" } }]);
  });

  it("reads a list whose first line is a comment as one address per line, even with a comma in the comment", () => {
    expect(readSuppressionList("# exported 2026-11-22, by hand\nada@example.com")).toEqual({ format: "text", rows: [{ line: 2, body: { email: "ada@example.com" } }] });
  });

  it("takes a lone email header as a one-column CSV, and drops a byte order mark", () => {
    expect(readSuppressionList("\uFEFFEmail\nada@example.com\n")).toEqual({ format: "csv", rows: [{ line: 2, body: { email: "ada@example.com" } }] });
  });

  it("reads the text as the format asked for, whatever its first line", () => {
    expect(() => readSuppressionList("ada@example.com", { format: "csv" })).toThrow('no column is named "email" (the header row: ada@example.com)');
    expect(readSuppressionList("email,reason\nada@example.com", { format: "text" }).rows.map((row) => row.body.email)).toEqual(["email,reason", "ada@example.com"]);
  });

  it("sends a reason the API lacks as written but for case, for the API to refuse at its line", () => {
    expect(readSuppressionList("email,reason\nada@example.com,Hard_Bounce").rows[0]?.body.reason).toBe("hard_bounce");
  });

  it("answers no rows for empty text, only comments, or a CSV header alone", () => {
    for (const text of ["", "# nothing yet\n\n", "email,reason\n"]) expect(readSuppressionList(text).rows).toEqual([]);
  });

  it.each([
    ["a CSV without an email column", "address,reason\nada@example.com,manual", 'no column is named "email" (the header row: address, reason)'],
    ["a CSV whose quote is not closed", 'email,detail\nada@example.com,"open', "line 2: a quoted field is not closed"],
    ["text after a closing quote", 'email\n"ada@example.com" x\n', "line 2: a quoted field must end at a comma"],
  ])("refuses %s, saying where", (_what, text, message) => {
    expect(() => readSuppressionList(text)).toThrow(SuppressionListError);
    expect(() => readSuppressionList(text)).toThrow(MailroomError);
    expect(() => readSuppressionList(text)).toThrow(message);
  });
});
