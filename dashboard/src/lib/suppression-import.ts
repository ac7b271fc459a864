// The Suppressions page's import: addresses pasted one per line, or a CSV export pasted with its
// header row, read into createSuppressionBatch's items by the SDK's readSuppressionList (the
// CLI's `suppressions create-batch` reads files with it too), and the batches' answers summed up.
import { readSuppressionList, SUPPRESSION_BATCH_LIMIT, SuppressionListError, type GivenSuppressionReason, type Problem, type SuppressionBatchItem, type SuppressionListRow } from "mailroom";

/** An address of the pasted text, with its line (1-based) to point at a refused one. */
export type ImportRow = SuppressionListRow;

export type AddressList = { ok: true; format: "csv" | "text"; rows: ImportRow[] } | { ok: false; error: string };

/** The addresses in pasted text, `reason` given to those that name none; or why it cannot be read. */
export function readAddressList(text: string, reason: GivenSuppressionReason): AddressList {
  try {
    const { format, rows } = readSuppressionList(text, { defaultReason: reason });
    if (rows.length === 0) return { ok: false, error: "There are no addresses to import." };
    return { ok: true, format, rows };
  } catch (error) {
    if (error instanceof SuppressionListError) return { ok: false, error: `${error.message[0]!.toUpperCase()}${error.message.slice(1)}.` };
    throw error;
  }
}

/** The rows in runs of SUPPRESSION_BATCH_LIMIT, one createSuppressionBatch call each. */
export function importChunks(rows: ImportRow[]): ImportRow[][] {
  const chunks: ImportRow[][] = [];
  for (let start = 0; start < rows.length; start += SUPPRESSION_BATCH_LIMIT) chunks.push(rows.slice(start, start + SUPPRESSION_BATCH_LIMIT));
  return chunks;
}

export interface RefusedAddress {
  line: number;
  email: string;
  /** The problem in words: each failing field's message, or the problem's detail. */
  problem: string;
}

export interface ImportOutcome {
  /** Addresses in the text. */
  total: number;
  /** Addresses the API answered (fewer than total when a call failed part way). */
  answered: number;
  added: number;
  alreadySuppressed: number;
  refused: RefusedAddress[];
}

/** What a problem says of one address: `email: "x" is not a valid email address`, or its detail. */
export function problemText(problem: Problem): string {
  const fields = (problem.errors ?? []).map((field) => (field.pointer ? `${field.pointer.slice(1)}: ${field.message}` : field.message));
  return fields.length > 0 ? fields.join("; ") : (problem.detail ?? problem.title);
}

/** Sums up the answers of the calls made so far, `batches[i]` answering `chunks[i]`. */
export function importOutcome(rows: ImportRow[], batches: SuppressionBatchItem[][]): ImportOutcome {
  const chunks = importChunks(rows);
  const items = batches.flatMap((batch, chunk) => batch.map((item) => ({ item, row: chunks[chunk]?.[item.index] })));
  return {
    total: rows.length,
    answered: items.length,
    added: items.filter(({ item }) => item.status === 201).length,
    alreadySuppressed: items.filter(({ item }) => item.status === 200).length,
    refused: items
      .filter(({ item }) => item.status === 422)
      .map(({ item, row }) => ({ line: row?.line ?? 0, email: row?.body.email ?? "", problem: item.error ? problemText(item.error) : "Refused." })),
  };
}
