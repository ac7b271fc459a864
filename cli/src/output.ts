import type { Io } from "./io.js";

/**
 * The two faces of every command: a human summary or table on a terminal, and JSON (the API's
 * own objects, unchanged) with `--json` or whenever stdout is not a terminal, so that
 * `mailroom … | jq` needs no flag.
 */
export class Output {
  readonly json: boolean;

  constructor(
    private readonly io: Io,
    jsonFlag: boolean | undefined,
  ) {
    this.json = jsonFlag ?? !io.stdout.isTTY;
  }

  /** One result: JSON as-is, or the human rendering. */
  result(data: unknown, human: () => string): void {
    this.io.stdout.write(this.json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
  }

  /** One item of a stream (`events tail`): a JSON line, or a human line. */
  line(data: unknown, human: () => string): void {
    this.io.stdout.write(this.json ? `${JSON.stringify(data)}\n` : `${human()}\n`);
  }

  /** Progress and hints: stderr, and only for a person at a terminal. */
  progress(text: string): void {
    if (this.io.stderr.isTTY) this.io.stderr.write(`${text}\n`);
  }

  /** A warning that does not stop the command: stderr, always, so that scripts can log it. */
  warn(text: string): void {
    this.io.stderr.write(`warning: ${text}\n`);
  }

  /** An error: a problem document as JSON in JSON mode, else words. Always on stderr. */
  error(data: unknown, human: string): void {
    this.io.stderr.write(this.json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
  }
}

/** A plain text table: padded columns, a header row, no borders. */
export function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return "(none)";
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)));
  const format = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return [format(headers), ...rows.map(format)].join("\n");
}

/** Aligned `label  value` lines, skipping empty values. */
export function fields(pairs: Array<[string, string | number | boolean | null | undefined]>): string {
  const shown = pairs.filter(([, value]) => value !== undefined && value !== null && value !== "");
  const width = Math.max(...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${label.padEnd(width)}  ${String(value)}`).join("\n");
}

/** A list field for a table cell: `a@x.com, b@y.com`, shortened past `max` characters. */
export function cell(value: string | string[] | null | undefined, max = 40): string {
  const text = Array.isArray(value) ? value.join(", ") : (value ?? "");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
