import { newIdempotencyKey, SUPPRESSION_BATCH_LIMIT, type Problem, type Suppression, type SuppressionBatchItem } from "mailroom";
import type { Command, Context } from "../command.js";
import { RefusedError, UsageError, optionalString, requiredString } from "../command.js";
import { readFileOrStdin } from "../io.js";
import { table } from "../output.js";
import { describeProblem } from "./render.js";
import { GIVEN_REASONS, readSuppressionFile, type GivenReason, type SuppressionFileFormat, type SuppressionRow } from "./suppression-file.js";

/** The longest Idempotency-Key the contract takes as a bare token. */
const KEY_LIMIT = 255;

/** What became of one address of the file: the API's item, placed in the file rather than in its request. */
export interface ImportedAddress {
  /** Its position among the file's addresses, from 0 (the API's `index` counts within one request). */
  index: number;
  /** Its line in the file; null for a JSON file. */
  line: number | null;
  /** The address as the file gave it. */
  email: string | null;
  status: SuppressionBatchItem["status"];
  suppression: Suppression | null;
  error: Problem | null;
}

/** The command's JSON output: the counts, the refused addresses, and every address's answer. */
export interface SuppressionImport {
  /** The key the requests were sent under, `<key>#<request number>` each: give it again to resume. */
  idempotency_key: string;
  counts: { total: number; added: number; already_suppressed: number; refused: number };
  refused: Array<Pick<ImportedAddress, "index" | "line" | "email" | "error">>;
  data: ImportedAddress[];
}

const count = (value: number) => value.toLocaleString("en-US");
const addresses = (value: number) => `${count(value)} ${value === 1 ? "address" : "addresses"}`;

/**
 * Sends the rows in requests of SUPPRESSION_BATCH_LIMIT, one after the other. Each request has
 * its own key, `<key>#<n>`, so that running the same file again with the same key replays the
 * requests that were answered (the server keeps their answers) and sends only the rest.
 */
async function sendInRequests({ client, output, rerunWith }: Context, rows: SuppressionRow[], key: { value: string; generated: boolean }): Promise<ImportedAddress[]> {
  const requests = Math.ceil(rows.length / SUPPRESSION_BATCH_LIMIT);
  const resume = `run the same command on the same file${key.generated ? ` with --idempotency-key ${key.value}` : ""} to finish`;
  if (requests > 1) output.progress(`${addresses(rows.length)}, in ${requests} requests of up to ${count(SUPPRESSION_BATCH_LIMIT)}; if it stops, ${resume}.`);
  const answered: ImportedAddress[] = [];
  for (let start = 0, request = 1; start < rows.length; start += SUPPRESSION_BATCH_LIMIT, request++) {
    const part = rows.slice(start, start + SUPPRESSION_BATCH_LIMIT);
    let batch;
    try {
      // Run again, the command is given the key itself, not this request's <key>#<n>.
      batch = await rerunWith(key.value, () => client().suppressions.createBatch({ suppressions: part.map((row) => row.body) }, { idempotencyKey: `${key.value}#${request}` }));
    } catch (error) {
      if (start > 0) output.progress(`Stopped at ${count(start)} / ${addresses(rows.length)}: ${resume}; the requests already answered are not sent again.`);
      throw error;
    }
    for (const item of batch.data) {
      const row = part[item.index];
      const email = row?.body.email;
      answered.push({
        index: start + item.index,
        line: row?.line ?? null,
        email: typeof email === "string" ? email : null,
        status: item.status,
        suppression: item.suppression,
        error: item.error,
      });
    }
    if (requests > 1) output.progress(`${count(start + part.length)} / ${addresses(rows.length)}`);
  }
  return answered;
}

function summarise(key: string, total: number, data: ImportedAddress[]): SuppressionImport {
  const refused = data.filter((item) => item.status === 422);
  return {
    idempotency_key: key,
    counts: {
      total,
      added: data.filter((item) => item.status === 201).length,
      already_suppressed: data.filter((item) => item.status === 200).length,
      refused: refused.length,
    },
    refused: refused.map(({ index, line, email, error }) => ({ index, line, email, error })),
    data,
  };
}

/** The counts, then one line per refused address: where it is in the file, the address, and why. */
function renderImport(result: SuppressionImport, format: SuppressionFileFormat): string {
  const { total, added, already_suppressed, refused } = result.counts;
  const summary = `${addresses(total)}: ${count(added)} added, ${count(already_suppressed)} already suppressed, ${count(refused)} refused.`;
  if (result.refused.length === 0) return summary;
  const rows = result.refused.map((item) => [String(item.line ?? item.index), item.email ?? "", item.error ? describeProblem(item.error) : ""]);
  return `${summary}\n\n${table([format === "json" ? "INDEX" : "LINE", "EMAIL", "PROBLEM"], rows)}`;
}

/** The refused addresses, for the exit-1 error: named by line (or index in JSON), the first few in words. */
function refusal(result: SuppressionImport, format: SuppressionFileFormat): RefusedError {
  const shown = 10;
  const places = result.refused.map((item) => item.line ?? item.index);
  const more = places.length > shown ? ` and ${count(places.length - shown)} more` : "";
  const where = format === "json" ? "index" : places.length === 1 ? "line" : "lines";
  const message = `${count(places.length)} of ${addresses(result.counts.total)} refused (${where} ${places.slice(0, shown).join(", ")}${more}).`;
  const indexes = result.refused.map((item) => item.index);
  return new RefusedError(message, format === "json" ? { refused: indexes } : { refused: indexes, lines: places });
}

export const createSuppressionBatch: Command = {
  command: "create-batch",
  aliases: ["import"],
  describe: "Suppress any number of addresses from a CSV, text or JSON file (or stdin), 1,000 per request; exit 1 if any is refused",
  operationId: "createSuppressionBatch",
  examples: [
    ["$0 suppressions create-batch --file suppressed.csv", "A CSV export with an email column"],
    ["$0 suppressions import --file unsubscribed.txt --reason unsubscribe", "One address per line, each an unsubscribe"],
    ["./export.sh | $0 suppressions import --file - --idempotency-key import-1", "From stdin; a rerun sends nothing twice"],
  ],
  builder: (yargs) =>
    yargs
      .option("file", {
        type: "string",
        describe: "The addresses: CSV with a header row naming an email column, one address per line, or JSON; - reads stdin",
        // Takes the next word whatever it is: yargs would otherwise read `-` as a positional.
        requiresArg: true,
        demandOption: "Give the addresses with --file <path>, or --file - for stdin.",
      })
      .option("reason", { type: "string", choices: GIVEN_REASONS, describe: "The reason for addresses the file gives none (default manual)" })
      .option("idempotency-key", { type: "string", describe: "Make running it again safe: request n is sent as <key>#n (default: a new key per run)" }),
  async run(context, args) {
    const { output, io } = context;
    const { source, content } = await readFileOrStdin(io, requiredString(args, "file"), "file");
    const { format, rows } = readSuppressionFile(content.toString("utf8"), source, optionalString(args, "reason") as GivenReason | undefined);
    const given = optionalString(args, "idempotency-key");
    const key = { value: given ?? newIdempotencyKey(), generated: given === undefined };
    const suffix = `#${Math.ceil(rows.length / SUPPRESSION_BATCH_LIMIT)}`;
    if (key.value.length + suffix.length > KEY_LIMIT) throw new UsageError(`--idempotency-key: at most ${KEY_LIMIT - suffix.length} characters for this file, since "${suffix}" is added to it.`);
    const result = summarise(key.value, rows.length, await sendInRequests(context, rows, key));
    output.result(result, () => renderImport(result, format));
    if (result.counts.refused > 0) throw refusal(result, format);
  },
};
