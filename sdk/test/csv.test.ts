import { describe, expect, it } from "vitest";
import { CsvError, parseCsv } from "../src/csv.js";

/** sdk/src/csv.ts: RFC 4180 records, each with the line it starts on. */
describe("parseCsv", () => {
  it("splits records at line breaks and fields at commas, keeping empty fields", () => {
    expect(parseCsv("email,reason,detail\nada@example.com,,note\n")).toEqual([
      { line: 1, fields: ["email", "reason", "detail"] },
      { line: 2, fields: ["ada@example.com", "", "note"] },
    ]);
  });

  it("reads quoted fields with commas, doubled quotes and line breaks, counting lines past them", () => {
    const text = 'email,detail\n"ada@example.com","Lovelace, Ada: said ""stop"""\ngrace@example.com,"two\nlines"\nlinus@example.com,x\n';
    expect(parseCsv(text)).toEqual([
      { line: 1, fields: ["email", "detail"] },
      { line: 2, fields: ["ada@example.com", 'Lovelace, Ada: said "stop"'] },
      { line: 3, fields: ["grace@example.com", "two\nlines"] },
      { line: 5, fields: ["linus@example.com", "x"] },
    ]);
  });

  it("takes CRLF, LF and CR line endings, and a last record without one", () => {
    expect(parseCsv("email\r\nada@example.com\rgrace@example.com\nlinus@example.com")).toEqual([
      { line: 1, fields: ["email"] },
      { line: 2, fields: ["ada@example.com"] },
      { line: 3, fields: ["grace@example.com"] },
      { line: 4, fields: ["linus@example.com"] },
    ]);
  });

  it("leaves out blank lines, keeping the line numbers of what follows", () => {
    expect(parseCsv("email\n\nada@example.com\n\n\n")).toEqual([
      { line: 1, fields: ["email"] },
      { line: 3, fields: ["ada@example.com"] },
    ]);
  });

  it("keeps a quote inside an unquoted field as it stands, as spreadsheets read it", () => {
    expect(parseCsv('email,detail\nada@example.com,5" floppy')[1]?.fields).toEqual(["ada@example.com", '5" floppy']);
  });

  it("reads an empty quoted field and a quoted field at the end of the text", () => {
    expect(parseCsv('"",a\n"b"')).toEqual([
      { line: 1, fields: ["", "a"] },
      { line: 2, fields: ["b"] },
    ]);
  });

  it("refuses a quoted field that is not closed, naming the line it is on", () => {
    const error = (() => {
      try {
        return parseCsv('email,detail\nada@example.com,"open\nstill open');
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(CsvError);
    expect(error).toMatchObject({ line: 2, message: "line 2: a quoted field is not closed" });
  });

  it("refuses text after a closing quote", () => {
    expect(() => parseCsv('email\n"ada@example.com" x\n')).toThrow("line 2: a quoted field must end at a comma or at the end of the line");
  });

  it("answers no records for empty text", () => {
    expect(parseCsv("")).toEqual([]);
    expect(parseCsv("\n\n")).toEqual([]);
  });
});
