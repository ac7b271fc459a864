// CSV as RFC 4180 writes it: comma-separated fields, a field in double quotes may hold commas,
// line breaks and doubled quotes (""). Hand-written rather than a dependency: the SDK depends on
// openapi-fetch alone (it runs in browsers too), and reading what a suppression list needs (a
// header row and short fields, src/suppression-list.ts) is this one function.

export interface CsvRecord {
  /** The line of the text the record starts on (1-based); a quoted line break makes it span several. */
  line: number;
  fields: string[];
}

/** Text that is not CSV, at the line where it goes wrong. */
export class CsvError extends Error {
  override name = "CsvError";
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

/**
 * The records of `text`, blank lines left out (files often end with one). CRLF, LF and a lone
 * CR all end a record. An unquoted field is taken as it stands, a stray quote included, as
 * spreadsheets read it; a quoted one must be closed and then end at a comma or the line's end.
 */
export function parseCsv(text: string): CsvRecord[] {
  // One line ending from here on, so that a position's line is a count of "\n" (inside quotes too).
  const source = text.replace(/\r\n?/g, "\n");
  const records: CsvRecord[] = [];
  let line = 1;
  let at = 0;
  while (at < source.length) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      if (source[at] === '"') {
        const close = closingQuote(source, at + 1);
        if (close === -1) throw new CsvError(line, "a quoted field is not closed");
        const value = source.slice(at + 1, close);
        line += value.split("\n").length - 1;
        fields.push(value.replaceAll('""', '"'));
        at = close + 1;
        if (at < source.length && source[at] !== "," && source[at] !== "\n") throw new CsvError(line, "a quoted field must end at a comma or at the end of the line");
      } else {
        const end = fieldEnd(source, at);
        fields.push(source.slice(at, end));
        at = end;
      }
      if (source[at] !== ",") break;
      at++;
    }
    if (source[at] === "\n") {
      at++;
      line++;
    }
    const blank = fields.length === 1 && fields[0] === "";
    if (!blank) records.push({ line: start, fields });
  }
  return records;
}

/** The index of the quote that closes a quoted field whose content starts at `from`, or -1. */
function closingQuote(source: string, from: number): number {
  let at = from;
  for (;;) {
    const quote = source.indexOf('"', at);
    if (quote === -1 || source[quote + 1] !== '"') return quote;
    at = quote + 2;
  }
}

/** Where an unquoted field starting at `from` ends: the next comma or line break, or the end. */
function fieldEnd(source: string, from: number): number {
  for (let at = from; at < source.length; at++) if (source[at] === "," || source[at] === "\n") return at;
  return source.length;
}
