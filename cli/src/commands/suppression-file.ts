// The addresses `suppressions create-batch --file` reads: a list exported from another provider
// (CSV), a plain list of addresses, or createSuppressionBatch's own JSON. Each address keeps where
// it stands in the file, so that a refused one can be pointed at in the file the user has open.
import { readSuppressionList, SuppressionListError, type CreateSuppressionParams, type GivenSuppressionReason } from "mailroom";
import { UsageError } from "../command.js";

export type SuppressionFileFormat = "json" | "csv" | "text";

export type GivenReason = GivenSuppressionReason;
/** The reasons a caller may give: hard bounces are recorded by Mailroom itself. */
export const GIVEN_REASONS = ["manual", "unsubscribe", "complaint"] as const satisfies readonly GivenReason[];

export interface SuppressionRow {
  /** The line of the file the address is on (1-based); null in JSON, whose items need not have one. */
  line: number | null;
  /** What createSuppressionBatch is sent for it; the API judges it (an invalid one comes back refused). */
  body: CreateSuppressionParams;
}

/**
 * The rows of a suppression file, `defaultReason` given to every row that names no reason. CSV
 * and plain lists are read by the SDK's readSuppressionList, as the dashboard reads pasted ones;
 * JSON is createSuppressionBatch's own body. Usage errors (nothing is sent): JSON that is not a
 * batch, a CSV without an `email` column, CSV quoting left open, no address at all.
 */
export function readSuppressionFile(text: string, source: string, defaultReason?: GivenReason): { format: SuppressionFileFormat; rows: SuppressionRow[] } {
  const { format, rows } = readRows(text, source, defaultReason);
  if (rows.length === 0) throw new UsageError(`--file: ${source} holds no addresses.`);
  return { format, rows };
}

function readRows(text: string, source: string, defaultReason?: GivenReason): { format: SuppressionFileFormat; rows: SuppressionRow[] } {
  // The extension says when it can (.json, .csv, .txt); else JSON starts with `{` or `[`, and the SDK tells CSV from a plain list.
  const extension = /\.(json|csv|txt)$/i.exec(source)?.[1]?.toLowerCase();
  const content = text.replace(/^\uFEFF/, "");
  if (extension === "json" || (extension === undefined && /^\s*[[{]/.test(content))) return { format: "json", rows: jsonRows(content, source, defaultReason) };
  try {
    return readSuppressionList(content, { ...(extension === "csv" ? { format: "csv" } : extension === "txt" ? { format: "text" } : {}), ...(defaultReason ? { defaultReason } : {}) });
  } catch (error) {
    if (error instanceof SuppressionListError) throw new UsageError(`--file: ${source}: ${error.message}.`);
    throw error;
  }
}

function jsonRows(content: string, source: string, defaultReason?: GivenReason): SuppressionRow[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch (error) {
    throw new UsageError(`--file: ${source} is not JSON (${(error as Error).message}).`);
  }
  const items = Array.isArray(parsed) ? parsed : isObject(parsed) ? parsed.suppressions : undefined;
  if (!Array.isArray(items)) throw new UsageError(`--file: ${source} holds neither { "suppressions": [...] } nor an array of suppressions.`);
  // The API refuses a whole request for an item that is not an object, so such an item would
  // stop the run part way; anything wrong inside an object is that item's own 422.
  const stray = items.findIndex((item: unknown) => !isObject(item));
  if (stray !== -1) throw new UsageError(`--file: ${source}: item ${stray} is not an object such as { "email": "ada@example.com" }.`);
  return (items as Record<string, unknown>[]).map((item) => {
    const body = { ...item } as CreateSuppressionParams;
    if (defaultReason !== undefined) body.reason ??= defaultReason;
    return { line: null, body };
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
