import stringWidth from "string-width";

/**
 * How many terminal columns text takes, and how to shorten it to a number of columns. A table's
 * cells quote what others wrote (subjects, names, mail servers' answers), in any script: counted in
 * UTF-16 units, as `String.length` does, a Chinese subject or an emoji pushes the next column out
 * of line, and cut there, half an emoji's surrogate pair prints as U+FFFD. string-width (the
 * package yargs lays out its help with) knows the Unicode widths: East Asian Wide and Fullwidth
 * and emoji take two columns, combining marks and format characters none.
 */

// Intl.Segmenter splits text into grapheme clusters, what a reader sees as one character: an
// emoji with its skin tone or ZWJ family, a letter with its combining accents, a flag's two
// regional indicators. Text is cut only between clusters.
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The terminal columns `text` takes (one line of it: no control characters, as printable() leaves a cell). */
export function textWidth(text: string): number {
  return stringWidth(text);
}

/** `text` padded with spaces to `width` columns. */
export function padToWidth(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - textWidth(text)));
}

/** `text` cut to at most `max` columns, on a cluster boundary, with `…` (one column) where it was cut. */
export function truncateToWidth(text: string, max: number): string {
  if (textWidth(text) <= max) return text;
  let kept = "";
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    const next = width + stringWidth(segment);
    if (next > max - 1) break;
    kept += segment;
    width = next;
  }
  return `${kept}…`;
}
