import { simpleParser, type ParsedMail, type SimpleParserOptions } from "mailparser";

/**
 * mailparser's splitter refuses a message past its limits (EMAXLEN): more than MAX_MIME_PARTS
 * MIME parts (its maxChildNodes, set here so that the 552 says what is enforced), or a part with
 * over 1 MiB of header fields (its default). No mail a person or an application writes comes
 * near either; a 10 MiB message could otherwise hold 200,000 parts.
 */
export const MAX_MIME_PARTS = 1000;

/** The end of the 552's text: what the limits are (RFC 3463 X.3.4: too big for the system). */
export const PARSER_LIMITS_TEXT = `(at most ${MAX_MIME_PARTS}, each with at most 1 MiB of header fields)`;

/**
 * The parsed message, or null when it is past the parser's limits. Such a message is refused for
 * good (552 5.3.4) by the SMTP servers: a retry would be the same message, so a 451 would have it
 * parsed again, and refused again, for days.
 */
export async function parseWithinLimits(raw: Buffer, options: SimpleParserOptions): Promise<ParsedMail | null> {
  // maxChildNodes is mailsplit's option, passed through, and not in mailparser's types.
  return simpleParser(raw, { ...options, maxChildNodes: MAX_MIME_PARTS } as SimpleParserOptions).catch((error: unknown) => {
    if ((error as { code?: unknown } | null)?.code === "EMAXLEN") return null;
    throw error;
  });
}
