/**
 * Whether a header field describes the MIME body (RFC 2045, 2183, 2392: Content-Type,
 * Content-Transfer-Encoding, Content-Disposition, Content-ID, Content-Location, ...). Mailroom
 * composes the body, so such a field given at the top of a message would contradict it, or worse,
 * follow it: a top-level Content-Disposition: attachment turns the whole message into a file.
 * Content-Language (RFC 3282) says what language the message is in, not how it is built, and stays
 * the sender's.
 */
export function describesMimeBody(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith("content-") && lower !== "content-language";
}

/**
 * RFC 5322 §2.1.1: a line is at most 998 characters. nodemailer folds a long value at its
 * spaces, and puts a run without one on a line of its own after a folding space: a run of 998
 * characters (a 998-character value or subject without a space, which the contract's maxLength
 * allows) would make a 999-character line. Tested on the MIME it renders (messages.test.ts). A send and
 * renderTemplate both hold a subject to it, so a render passes exactly when the send would.
 */
const LONGEST_UNFOLDABLE_RUN = 997;
export const UNFOLDABLE = `cannot be folded into lines of at most 998 characters (RFC 5322): a run of more than ${LONGEST_UNFOLDABLE_RUN} characters without a space; break it with a space or shorten it`;
// A run with a character past ASCII is written as RFC 2047 encoded words, which are split short.
export const unfoldable = (value: string): boolean => value.length > LONGEST_UNFOLDABLE_RUN && value.split(/[ \t]/).some((run) => run.length > LONGEST_UNFOLDABLE_RUN && /^[\x21-\x7e]*$/.test(run));
