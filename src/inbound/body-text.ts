import { cut } from "../domain/cut.js";
import { textFromHtml } from "../domain/text-from-html.js";

/**
 * How much of an HTML-only message's markup its text is derived from, and how long that text may
 * be (UTF-16 code units). What a sender writes is bounded by INBOUND_MAX_MESSAGE_BYTES, but the
 * text of markup is not: 1 MiB of `<hr>` makes 20 MiB of dashes, which filled the reply's row past
 * what one statement may carry (and cost its conversion again on every retry). A message's own
 * text parts are kept whole; only text Mailroom makes up is bounded, and cut at its end, where a
 * reply's quoted history is.
 */
export const DERIVED_TEXT_SOURCE_MAX = 1024 * 1024;
export const DERIVED_TEXT_MAX = 1024 * 1024;

/**
 * A received message's plain text: its text parts as mailparser joined them (parsed with
 * `skipHtmlToText`), else, when it has only HTML, the text of its HTML as the delivery pipeline
 * derives it (textFromHtml), from at most DERIVED_TEXT_SOURCE_MAX of the markup and at most
 * DERIVED_TEXT_MAX long. Null when it has neither.
 */
export function bodyText(text: string | undefined, html: string | false | undefined): string | null {
  if (text !== undefined && text.trim() !== "") return text;
  if (typeof html === "string" && html.trim() !== "") return cut(textFromHtml(cut(html, DERIVED_TEXT_SOURCE_MAX)), DERIVED_TEXT_MAX);
  return text ?? null;
}
