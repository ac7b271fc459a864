import { compile } from "html-to-text";

/**
 * The plain-text body of a message or template that has only html: what the delivery pipeline
 * puts in the text/plain part and what renderTemplate shows, so both read the same.
 * html-to-text's convert() compiles its options on every call, which costs more than converting
 * a typical message; compiled once, the converter is reused.
 */
export const textFromHtml: (html: string) => string = compile({ wordwrap: 78 });
