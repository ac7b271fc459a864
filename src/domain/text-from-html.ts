import { compile, type FormatCallback } from "html-to-text";
import { cut } from "./cut.js";

type Element = Parameters<FormatCallback>[0];
type Builder = Parameters<FormatCallback>[2];

/**
 * How deep html-to-text walks the markup; below that, an element's content is written as "...".
 * Its walk recurses once per level, and past ~2,000 levels (10 KB of `<div>`) the call stack ran
 * out: the conversion threw. Real mail nests a few dozen levels (a layout's tables, a long reply
 * thread's quotes at three or four levels each); this leaves the stack several times the room.
 */
const MAX_DEPTH = 256;

/**
 * One conversion's share of text (passed to html-to-text as its metadata): how much the result
 * may be (`max`), and how much of it the bounded elements below have written so far.
 */
interface Budget {
  readonly max: number;
  /** The length of the closed bounded elements inside each open one (the first: at the top). */
  readonly open: number[];
  /** Their sum: text that is in the result, before anything still to be walked. */
  written: number;
  /** Whether something was left out; the result is then cut even where what remains fits. */
  cut: boolean;
}

/**
 * html-to-text's own formatter `format`, kept to the budget: html-to-text builds the whole text
 * before returning it, so the elements whose text can be far longer than their markup (a line of
 * 78 dashes for an `<hr>`; a prefix on every line of a quote or a list item, at every level)
 * stop being written once the text is past the cap, and none is kept longer than the cap. What
 * comes after the cap is cut anyway, so the result is the same up to the cut. The element's text
 * goes through a block of its own, which adds nothing (the element's text is never empty, and
 * lends the block its line breaks), only a place to measure and shorten it.
 */
function bounded(format: string, list = false): FormatCallback {
  return (elem, walk, builder, options) => {
    const budget = budgetOf(builder);
    if (budget.written >= budget.max) {
      budget.cut = true;
      return;
    }
    const original = builder.options.formatters[format]!;
    // A list without items writes no prefixes, and may write nothing at all, where an empty block
    // would still add its line breaks.
    if (list && !elem.children?.some((child) => child.name === "li")) {
      original(elem, walk, builder, options);
      return;
    }
    budget.open.push(0);
    builder.openBlock({ leadingLineBreaks: 0 });
    original(elem, walk, builder, options);
    builder.closeBlock({ trailingLineBreaks: 0, blockTransform: (text) => written(budget, text) });
  };
}

/** Counts a bounded element's text, which replaces its inner elements' in the count. */
function written(budget: Budget, text: string): string {
  const inner = budget.open.pop()!;
  const end = endBefore(text, budget.max, 2 * (budget.open.length - 1));
  if (end < text.length) {
    text = cut(text, end);
    budget.cut = true;
  }
  budget.written += text.length - inner;
  const top = budget.open.length - 1;
  budget.open[top] = budget.open[top]! + text.length;
  return text;
}

/**
 * The length of `text` that can come before the cap (`max`) in the result, when each of its lines
 * will get at least `perLine` more characters there: the open bounded elements around it are
 * quotes and lists, which write "> " or at least two characters of a list item's prefix or indent
 * on every line. Dropping what comes later changes nothing before the cap, and keeps from an
 * element inside n others at most max / 2n lines, which each of them rewrites as it closes.
 */
function endBefore(text: string, max: number, perLine: number): number {
  if (text.length * (1 + perLine) < max) return text.length;
  // Before the k-th line break of the text, a character at p comes at p + k * perLine at least.
  let lineStart = 0;
  for (let lines = 0; ; lines++) {
    const first = Math.max(lineStart, max - lines * perLine);
    const lineBreak = text.indexOf("\n", lineStart);
    const lineEnd = lineBreak === -1 ? text.length : lineBreak + 1;
    if (first < lineEnd) return first;
    if (lineBreak === -1) return text.length;
    lineStart = lineEnd;
  }
}

/**
 * An `<ol>` numbered as browsers number it. Its `start` is read by HTML's rules for parsing
 * integers (the leading digits, so "1e400" and "1.5" are 1; none at all is the default, 1), where
 * html-to-text took Number(start): Infinity, or 1.5. A counter style whose range does not hold
 * every number falls back to decimal (CSS Counter Styles): roman numerals are 1 to 3999, letters 1
 * and up. html-to-text's numerals end at 3999 (past it, "undefined"; from 10000 or a start such
 * as 1.23456 it threw, so the message could not be rendered and was retried until it expired),
 * and its letters below 1 were a backquote, a bracket or NUL.
 */
function numberedAsBrowsersDo(elem: Element): Element {
  const attribs = elem.attribs as Record<string, string> | undefined;
  if (attribs === undefined) return elem;
  // The DOM is this conversion's own, made from the html for it and dropped after.
  const first = htmlInteger(attribs["start"]) ?? 1;
  if (attribs["start"] !== undefined) attribs["start"] = String(first);
  const last = first + (elem.children ?? []).filter((child) => child.name === "li").length - 1;
  const type = attribs["type"];
  const roman = type === "i" || type === "I";
  const letters = type === "a" || type === "A";
  if ((roman && (first < 1 || last > 3999)) || (letters && first < 1)) attribs["type"] = "1";
  return elem;
}

/** HTML's rules for parsing integers: optional white space and sign, then digits; null without any, or past any number. */
function htmlInteger(value: string | undefined): number | null {
  const digits = value === undefined ? null : /^[\t\n\f\r ]*([+-]?\d+)/.exec(value);
  const integer = digits ? Number(digits[1]) : null;
  return integer !== null && Number.isFinite(integer) ? integer : null;
}

function budgetOf(builder: Builder): Budget {
  // html-to-text passes a conversion's metadata to its formatters as builder.metadata (its
  // README, "Custom metadata"); @types/html-to-text does not declare it.
  return (builder as Builder & { metadata: Budget }).metadata;
}

const boundedOrderedList = bounded("orderedList", true);

/**
 * html-to-text's convert() compiles its options on every call, which costs more than converting
 * a typical message; compiled once, the converter is reused.
 */
const convert = compile({
  wordwrap: 78,
  limits: { maxDepth: MAX_DEPTH },
  formatters: {
    boundedHorizontalLine: bounded("horizontalLine"),
    boundedBlockquote: bounded("blockquote"),
    boundedOrderedList: (elem, walk, builder, options) => boundedOrderedList(numberedAsBrowsersDo(elem), walk, builder, options),
    boundedUnorderedList: bounded("unorderedList", true),
  },
  // Merged with html-to-text's own selectors for these elements, which keep their options.
  selectors: [
    { selector: "hr", format: "boundedHorizontalLine" },
    { selector: "blockquote", format: "boundedBlockquote" },
    { selector: "ol", format: "boundedOrderedList" },
    { selector: "ul", format: "boundedUnorderedList" },
  ],
}) as (html: string, budget: Budget) => string;

/**
 * The length a derived text part may reach whatever its html (characters): text from short html
 * is never cut, however its markup is written.
 */
export const DERIVED_TEXT_MIN_CHARS = 64 * 1024;

/**
 * The most tags (counted as the markup's `<`) a text is derived from; markup with more is derived
 * up to that many, and its text is cut there. html-to-text parses the whole markup into a
 * document tree before it writes a word, at ~330 bytes of heap per element: 10 MB of `<br>`
 * (2.6 million elements, within what a message may carry) took 850 MB and 11 s of CPU, in a
 * compose thread whose byte budget counted 10 MB, on every attempt. Cut to this many tags, 10 MB
 * of `<br>`, or of a styled table of links, took 18-24 MB and 0.3 s. Real mail has a
 * few thousand: a newsletter at the 102 KB past which Gmail clips a message has 2,000-5,000.
 */
export const DERIVED_TEXT_MAX_TAGS = 50_000;

/** The markup before its (maxTags + 1)th tag: all of it when it has no more tags than that. */
function withinTags(html: string, maxTags: number): string {
  let at = -1;
  for (let tags = 0; tags <= maxTags; tags++) {
    at = html.indexOf("<", at + 1);
    if (at === -1) return html;
  }
  return html.slice(0, at);
}

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
 * the html, and never cut. Cutting the result was not enough: html-to-text builds the whole text
 * before returning it (10 MB of `<hr>`: 200 MB of dashes, per message, in a worker of 1 GiB), so
 * the elements that write more than their markup keep to the cap as they are written (`bounded`),
 * and what html-to-text builds stays within a small multiple of the cap, whatever the markup. Its
 * document tree is bounded by the number of tags it is given (DERIVED_TEXT_MAX_TAGS).
 */
export function textFromHtml(html: string): string {
  const max = Math.max(html.length, DERIVED_TEXT_MIN_CHARS);
  const source = withinTags(html, DERIVED_TEXT_MAX_TAGS);
  const budget: Budget = { max, open: [0], written: 0, cut: source.length < html.length };
  const text = convert(source, budget);
  if (text.length <= max && !budget.cut) return text;
  const room = max - DERIVED_TEXT_CUT.length;
  const lineBreak = text.length <= room ? text.length : text.lastIndexOf("\n", room);
  let end = lineBreak > 0 ? lineBreak : room;
  // Never half of a surrogate pair.
  if (end > 0 && /[\ud800-\udbff]/.test(text[end - 1]!)) end--;
  return text.slice(0, end).trimEnd() + DERIVED_TEXT_CUT;
}
