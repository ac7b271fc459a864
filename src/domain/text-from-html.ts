import { compile } from "html-to-text";

/**
 * html-to-text's convert() compiles its options on every call, which costs more than converting
 * a typical message; compiled once, the converter is reused.
 */
const convert = compile({ wordwrap: 78 });

/**
 * The length a derived text part may reach whatever its html (characters): text from short html
 * is never cut, however its markup is written.
 */
export const DERIVED_TEXT_MIN_CHARS = 64 * 1024;

/** What ends a derived text that was cut: the reader can tell that the rest is in the HTML part. */
export const DERIVED_TEXT_CUT = "\n\n[...]\n";

/**
 * The plain-text body of a message or template that has only html: what the delivery pipeline
 * puts in the text/plain part and what renderTemplate shows, so both read the same.
 *
 * At most as long as the html it comes from (or DERIVED_TEXT_MIN_CHARS, for shorter html), cut
 * at a line break past that. Text from markup can be far longer than the markup: html-to-text
 * writes each `<hr>` (4 characters) as a line of 78 dashes, and repeats the prefixes of nested
 * quotes and lists on every line. Uncut, 330 KB of html made a 16 MB text part: sent to every
 * recipient, held in the worker's memory beyond what its byte budget counts (the stored size),
 * and stored with the message. Text from real html is its markup without the tags, shorter than
 * the html, and never cut.
 */
export function textFromHtml(html: string): string {
  const text = convert(html);
  const max = Math.max(html.length, DERIVED_TEXT_MIN_CHARS);
  if (text.length <= max) return text;
  const room = max - DERIVED_TEXT_CUT.length;
  const lineBreak = text.lastIndexOf("\n", room);
  let end = lineBreak > 0 ? lineBreak : room;
  // Never half of a surrogate pair.
  if (end > 0 && /[\ud800-\udbff]/.test(text[end - 1]!)) end--;
  return text.slice(0, end).trimEnd() + DERIVED_TEXT_CUT;
}
