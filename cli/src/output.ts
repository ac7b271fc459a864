import type { Io } from "./io.js";
import { padToWidth, textWidth, truncateToWidth } from "./text-width.js";

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

  // Every human text passes through printable() (JSON escapes control characters itself): most of
  // it quotes what others wrote (a reply, a mail server's answer, an API error's detail).

  /**
   * One result: JSON as-is, or the human rendering. `hint`, what a person could do next ("Follow it
   * with: …"), is not part of it: it is said in human mode only, and like progress to stderr on a
   * terminal only, so that `mailroom … --no-json | tail -1` gets the result, not advice about it.
   */
  result(data: unknown, human: () => string, hint?: () => string | undefined): void {
    this.io.stdout.write(this.json ? `${JSON.stringify(data, null, 2)}\n` : `${printable(human(), { lines: true })}\n`);
    // Worked out only when it will be shown: in JSON mode the answer may lack what a hint reads.
    if (hint && this.showsHints) this.aside(hint());
  }

  /** One item of a stream (`events tail`): a JSON line, or a human line. */
  line(data: unknown, human: () => string): void {
    this.io.stdout.write(this.json ? `${JSON.stringify(data)}\n` : `${printable(human(), { lines: true })}\n`);
  }

  /** How far a long command has got (`fetched 100…`): for a person at a terminal, in either mode. */
  progress(text: string): void {
    if (this.showsProgress) this.aside(text);
  }

  /**
   * The one rule for what is said aside from the result: only to a person, who is there when
   * stderr is a terminal; in a log or a pipe it would only be noise among the errors.
   */
  private get showsProgress(): boolean {
    return this.io.stderr.isTTY === true;
  }

  /** Hints also need the human output: in JSON mode stdout goes to a program, whatever reads stderr. */
  private get showsHints(): boolean {
    return this.showsProgress && !this.json;
  }

  private aside(text: string | undefined): void {
    if (text !== undefined) this.io.stderr.write(`${printable(text, { lines: true })}\n`);
  }

  /** A warning that does not stop the command: stderr, always, so that scripts can log it. */
  warn(text: string): void {
    this.aside(`warning: ${text}`);
  }

  /**
   * An error a stop (Ctrl-C) leaves to report: at a terminal on a line of its own, since the
   * terminal has echoed `^C` on the current one.
   */
  stopped(data: unknown, human: string): void {
    if (this.showsProgress) this.io.stderr.write("\n");
    this.error(data, human);
  }

  /** An error: a problem document as JSON in JSON mode, else words. Always on stderr. */
  error(data: unknown, human: string): void {
    this.io.stderr.write(this.json ? `${JSON.stringify(data, null, 2)}\n` : `${printable(human, { lines: true })}\n`);
  }
}

// Control characters are what these match, on purpose.
// eslint-disable-next-line no-control-regex
const CONTROLS_BUT_TAB = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex
const CONTROLS_BUT_TAB_AND_LF = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text made safe for a terminal: each C0 or C1 control character (ESC, BEL, CR, CSI…) shown as a
 * visible symbol (␛, ␇, ␍; a C1 one as \u009b), so that text someone else wrote (a reply's
 * subject, a mail server's answer) cannot move the cursor, erase lines or set the clipboard
 * (OSC 52). Tabs stay; line breaks stay only with `lines` (a body), not in a field or a cell.
 */
export function printable(text: string, { lines = false } = {}): string {
  return text.replace(lines ? CONTROLS_BUT_TAB_AND_LF : CONTROLS_BUT_TAB, (char) => {
    const code = char.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return "\u2421";
    return `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** A plain text table: padded columns, a header row, no borders. Widths are terminal columns (text-width.ts). */
export function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return "(none)";
  rows = rows.map((row) => row.map((cell) => printable(cell)));
  const widths = headers.map((header, column) => Math.max(textWidth(header), ...rows.map((row) => textWidth(row[column] ?? ""))));
  const format = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : padToWidth(cell, widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return [format(headers), ...rows.map(format)].join("\n");
}

/** Aligned `label  value` lines, skipping empty values. */
export function fields(pairs: Array<[string, string | number | boolean | null | undefined]>): string {
  const shown = pairs.filter(([, value]) => value !== undefined && value !== null && value !== "");
  const width = Math.max(...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${label.padEnd(width)}  ${printable(String(value))}`).join("\n");
}

/** A list field for a table cell: `a@x.com, b@y.com`, shortened past `max` terminal columns. */
export function cell(value: string | string[] | null | undefined, max = 40): string {
  return truncateToWidth(printable(Array.isArray(value) ? value.join(", ") : (value ?? "")), max);
}

/** A field error's place: its pointer ("/" for the body as a whole), and its line where the API names one (a template's Liquid). */
export function fieldAt(field: { pointer: string; line?: number | undefined }): string {
  return `${field.pointer || "/"}${field.line === undefined ? "" : ` (line ${field.line})`}`;
}

/** One of a problem's `errors`, as the API gives it. */
type FieldError = { location?: string | undefined; pointer: string; message: string; line?: number | undefined };

/**
 * A problem as lines for people: `lead` and what went wrong, then each failing field. The detail
 * says what went wrong, with field errors too: it can say what they cannot, such as how to verify
 * a sender domain. Only a detail that merely restates the fields gives way to the title.
 */
export function problemLines(lead: string, problem: { title: string; detail?: string | null | undefined; errors?: ReadonlyArray<FieldError> | undefined }): string[] {
  const errors = problem.errors ?? [];
  const detail = problem.detail && !restatesFields(problem.detail, errors) ? problem.detail : undefined;
  return [`${lead}: ${detail ?? problem.title}`, ...errors.map((field) => `  ${fieldAt(field)}: ${field.message}`)];
}

/**
 * Whether a detail says no more than the field lines under it, in the API's wording for a
 * validation or render failure (src/domain/errors.ts, src/http/problems.ts): its one field as
 * `<where>: <message>`, or a count of them ("2 fields are invalid."). A count of more fields than
 * are listed (a request log keeps only the first that fit) still tells something, so it stays.
 */
function restatesFields(detail: string, errors: ReadonlyArray<FieldError>): boolean {
  const [only, ...more] = errors;
  if (only === undefined) return false;
  if (more.length === 0) return [only.pointer, only.location, "The request"].some((where) => where && detail === `${where}: ${only.message}`);
  return new RegExp(`^${errors.length} fields [a-z ]+\\.$`).test(detail);
}
