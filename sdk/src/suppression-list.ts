// A suppression list as people bring it from another provider, read into createSuppressionBatch's
// items: a CSV export, or a plain list of addresses. The CLI (`suppressions create-batch --file`)
// and the dashboard's import both read lists with it, so a list is read the same way through
// either door; it is exported for code that imports lists of its own.
import { CsvError, parseCsv } from "./csv.js";
import { MailroomError } from "./errors.js";
import type { CreateSuppressionParams } from "./types.js";

export type SuppressionListFormat = "csv" | "text";

/** A reason a caller may give (hard bounces are recorded by Mailroom itself). */
export type GivenSuppressionReason = NonNullable<CreateSuppressionParams["reason"]>;

export interface SuppressionListRow {
  /** The line of the text the address is on (1-based), to point at a refused one. */
  line: number;
  /** What createSuppressionBatch is sent for it; the API judges it (an invalid one comes back refused). */
  body: CreateSuppressionParams;
}

/** Text that cannot be read as a suppression list: CSV quoting left open, no `email` column. */
export class SuppressionListError extends MailroomError {
  override name = "SuppressionListError";
}

export interface ReadSuppressionListOptions {
  /** How to read the text; by default, told from its first line (see readSuppressionList). */
  format?: SuppressionListFormat;
  /** The reason of the rows that name none; absent, the API's default (`manual`). */
  defaultReason?: GivenSuppressionReason;
}

/**
 * The addresses in `text`, each with its line. CSV is a header row naming an `email` column and
 * optionally `reason` and `detail` (any case, any order), then a row per address, rows with no
 * value in any cell (`,,`) left out; plain text is one address per line, blank lines and `#`
 * comments left out. Unless `format` says, text is CSV when its first non-blank line has a comma
 * or a quote or is `email` alone (an address holds neither), and is not a `#` comment (CSV has
 * none). A byte order mark, which spreadsheets save CSV with, is dropped. An empty list is not an
 * error here: the caller says so in its own words.
 */
export function readSuppressionList(text: string, options: ReadSuppressionListOptions = {}): { format: SuppressionListFormat; rows: SuppressionListRow[] } {
  const content = text.replace(/^\uFEFF/, "");
  const format = options.format ?? formatOf(content);
  const rows = format === "csv" ? csvRows(content) : textRows(content);
  if (options.defaultReason !== undefined) for (const row of rows) row.body.reason ??= options.defaultReason;
  return { format, rows };
}

function formatOf(content: string): SuppressionListFormat {
  const first = content.split(/\r\n?|\n/).find((line) => line.trim() !== "")?.trim();
  return first !== undefined && !first.startsWith("#") && (/[,"]/.test(first) || first.toLowerCase() === "email") ? "csv" : "text";
}

function csvRows(content: string): SuppressionListRow[] {
  let records;
  try {
    records = parseCsv(content);
  } catch (error) {
    if (error instanceof CsvError) throw new SuppressionListError(error.message);
    throw error;
  }
  // Spreadsheets export their empty rows as ",,": a row with no value in any cell is no row at
  // all (a header below such rows is still the header). Each record keeps its own line.
  const [header, ...rows] = records.filter(({ fields }) => fields.some((field) => field.trim() !== ""));
  if (!header) return [];
  const names = header.fields.map((name) => name.trim().toLowerCase());
  const [email, reason, detail] = ["email", "reason", "detail"].map((name) => names.indexOf(name)) as [number, number, number];
  if (email === -1) {
    throw new SuppressionListError(`no column is named "email" (the header row: ${header.fields.join(", ")}); a CSV list starts with a header row naming its columns: email, and optionally reason and detail`);
  }
  return rows.map(({ line, fields }) => {
    // An empty cell is a value not given: the row then takes the default reason, or the API's.
    const cell = (index: number) => (index === -1 ? "" : (fields[index] ?? "").trim());
    const body: CreateSuppressionParams = { email: cell(email) };
    // Sent as written but for case ("Unsubscribe" is unsubscribe): a reason the API lacks comes back refused, at its line.
    if (cell(reason)) body.reason = cell(reason).toLowerCase() as GivenSuppressionReason;
    if (cell(detail)) body.detail = cell(detail);
    return { line, body };
  });
}

function textRows(content: string): SuppressionListRow[] {
  return content
    .split(/\r\n?|\n/)
    .map((text, index) => ({ line: index + 1, email: text.trim() }))
    .filter(({ email }) => email !== "" && !email.startsWith("#"))
    .map(({ line, email }) => ({ line, body: { email } }));
}
