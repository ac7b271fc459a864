import type { SuppressionBatchItem } from "mailroom";
import { describe, expect, it } from "vitest";
import { importChunks, importOutcome, problemText, readAddressList, type ImportRow } from "../../dashboard/src/lib/suppression-import.js";

/**
 * The Suppressions page's import (dashboard/src/lib/suppression-import.ts): pasted text read into
 * createSuppressionBatch's items at their lines (the SDK's readSuppressionList, whose rules
 * sdk/test/suppression-list.test.ts pins), and the answers of its calls summed up.
 */
const rowsOf = (text: string, reason: "manual" | "unsubscribe" | "complaint" = "manual") => {
  const list = readAddressList(text, reason);
  if (!list.ok) throw new Error(list.error);
  return list.rows;
};

const problem = (pointer: string, message: string) => ({
  type: "https://mailroom.dev/problems/validation_failed",
  title: "Validation failed",
  status: 422,
  detail: "The request has 1 invalid field.",
  code: "validation_failed",
  request_id: "req_1",
  errors: [{ location: "body" as const, pointer, message }],
});

describe("readAddressList", () => {
  it("reads pasted addresses or CSV at their lines, the chosen reason where a row gives none", () => {
    expect(readAddressList("# from the old tool\nada@example.com\n", "unsubscribe")).toEqual({ ok: true, format: "text", rows: [{ line: 2, body: { email: "ada@example.com", reason: "unsubscribe" } }] });
    expect(rowsOf("email,reason\nada@example.com,complaint\ngrace@example.com,", "unsubscribe").map((row) => row.body.reason)).toEqual(["complaint", "unsubscribe"]);
  });

  it.each([
    ["nothing", "", "There are no addresses to import."],
    ["only comments", "# nothing yet\n\n", "There are no addresses to import."],
    ["a CSV with only its header", "email,reason\n", "There are no addresses to import."],
    ["a CSV without an email column", "address,reason\nada@example.com,manual", 'No column is named "email" (the header row: address, reason); a CSV list starts with a header row naming its columns: email, and optionally reason and detail.'],
    ["a CSV whose quote is not closed", 'email,detail\nada@example.com,"open', "Line 2: a quoted field is not closed."],
  ])("refuses %s, in a sentence", (_what, text, error) => {
    expect(readAddressList(text, "manual")).toEqual({ ok: false, error });
  });
});

describe("importChunks", () => {
  it("splits the rows into calls of at most 1,000, in order", () => {
    const rows = rowsOf(Array.from({ length: 2_500 }, (_, index) => `reader${index}@example.org`).join("\n"));
    const chunks = importChunks(rows);
    expect(chunks.map((chunk) => chunk.length)).toEqual([1000, 1000, 500]);
    expect(chunks[2]?.[0]?.line).toBe(2_001);
  });
});

describe("importOutcome", () => {
  const rows: ImportRow[] = rowsOf(Array.from({ length: 1_002 }, (_, index) => (index === 1_001 ? "not-an-address" : `reader${index}@example.org`)).join("\n"));
  const answer = (status: 200 | 201, index: number): SuppressionBatchItem => ({ index, status, suppression: null, error: null });

  it("counts what each call answered, and places a refused address at its line, whichever call it was in", () => {
    const first = Array.from({ length: 1000 }, (_, index) => answer(index === 0 ? 200 : 201, index));
    const second: SuppressionBatchItem[] = [answer(201, 0), { index: 1, status: 422, suppression: null, error: problem("/email", '"not-an-address" is not a valid email address') }];
    expect(importOutcome(rows, [first, second])).toEqual({
      total: 1_002,
      answered: 1_002,
      added: 1_000,
      alreadySuppressed: 1,
      refused: [{ line: 1_002, email: "not-an-address", problem: 'email: "not-an-address" is not a valid email address' }],
    });
  });

  it("says how many were answered when a call failed part way", () => {
    const first = Array.from({ length: 1000 }, (_, index) => answer(201, index));
    expect(importOutcome(rows, [first])).toMatchObject({ total: 1_002, answered: 1_000, added: 1_000, refused: [] });
  });
});

describe("problemText", () => {
  it("names each failing field, or says the problem's detail", () => {
    expect(problemText(problem("/reason", "must be one of manual, unsubscribe, complaint"))).toBe("reason: must be one of manual, unsubscribe, complaint");
    expect(problemText({ ...problem("", ""), errors: [], detail: "Too many requests." })).toBe("Too many requests.");
  });
});
