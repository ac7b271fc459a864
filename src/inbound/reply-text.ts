/**
 * A reply's new text and the quoted history under it. Mail clients mark the history in a few
 * ways: an attribution line ("On <date>, <who> wrote:", Gmail and Apple Mail and most others,
 * in a handful of languages), Outlook's "-----Original Message-----" or its "From: … Sent: …"
 * header block, or a run of "> " lines. The history starts at the first such marker; without one, it
 * is all new text.
 *
 * Written here rather than taken from a package: the maintained ports of GitHub's
 * email_reply_parser also strip signatures and drop text between quotes, which a reply's
 * reader (the API user) would want kept.
 */
export interface SplitReply {
  text: string | null;
  quoted: string | null;
}

const ATTRIBUTION = [
  /^On\b.{0,300}\bwrote:?\s*$/i, // Gmail, Apple Mail, Thunderbird
  // One run of spaces before the end, not "\s*:?\s*": two over the same run backtrack through every
  // way of sharing it (and see ATTRIBUTION_MAX_LENGTH).
  /^Le\b.{0,300}\ba écrit\s*(?::\s*)?$/i, // French
  /^Am\b.{0,300}\bschrieb\b.{0,100}:?\s*$/i, // German
  /^El\b.{0,300}\bescribió:?\s*$/i, // Spanish
  /^Op\b.{0,300}\bschreef\b.{0,100}:?\s*$/i, // Dutch
  /^Il\b.{0,300}\bha scritto:?\s*$/i, // Italian
  /^Em\b.{0,300}\bescreveu:?\s*$/i, // Portuguese
];
/**
 * No attribution is longer: each pattern matches a whole line of at most 2 + 300 + 7 + 100 + 1
 * characters. A longer line is not tried, so the patterns' cost is bounded per line whatever they
 * are: ".{0,100}" and ":?\s*" can share a run of spaces, and a long one made them backtrack for
 * seconds (a base64 part, or a reply written to stall the receiver, makes a line that long).
 */
const ATTRIBUTION_MAX_LENGTH = 450;
const isAttribution = (text: string): boolean => text.length <= ATTRIBUTION_MAX_LENGTH && ATTRIBUTION.some((re) => re.test(text));

const OUTLOOK_SEPARATOR = /^\s*-{2,}\s*(Original Message|Ursprüngliche Nachricht|Message d'origine|Mensaje original)\s*-{2,}\s*$/i;
const OUTLOOK_HEADER = /^\*?(From|De|Von|Van):\*?\s/;
const OUTLOOK_HEADER_NEXT = /^\*?(Sent|Date|Envoyé|Gesendet|Enviado|Verzonden|To|À|An|Para|Aan):\*?\s/;

export function splitReply(body: string | null | undefined): SplitReply {
  if (body === null || body === undefined) return { text: null, quoted: null };
  const lines = body.replace(/\r\n?/g, "\n").split("\n");
  const start = historyStart(lines);
  const tidy = (part: string[]): string | null => {
    const joined = part.join("\n").replace(/^\s*\n/, "").trimEnd();
    return joined === "" ? null : joined;
  };
  if (start === -1) return { text: tidy(lines), quoted: null };
  return { text: tidy(lines.slice(0, start)), quoted: tidy(lines.slice(start)) };
}

/**
 * The index of the line where the quoted history starts, or -1. Exported so a test can count the
 * lines it reads (its cost is a bounded number of reads per line, whatever the lines are).
 */
export function historyStart(lines: readonly string[]): number {
  // Where the trailing run of quoted (and blank) lines starts: found once, from the end, so that
  // a reply of thousands of ">" lines costs a pass rather than a pass per line.
  let quotedTail = lines.length;
  while (quotedTail > 0 && isQuotedOrBlank(lines[quotedTail - 1]!)) quotedTail--;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    // An attribution may wrap onto a second line ("On Sat, 21 Nov 2026, Acme <hello@acme.example>\nwrote:").
    const joined = i + 1 < lines.length ? `${line} ${lines[i + 1]!.trim()}` : line;
    if (isAttribution(line)) return i;
    if (isAttribution(joined) && /wrote:?\s*$|écrit\s*(?::\s*)?$|schrieb/i.test(lines[i + 1]!)) return i;
    if (OUTLOOK_SEPARATOR.test(line)) return i;
    if (OUTLOOK_HEADER.test(line) && i + 1 < lines.length && OUTLOOK_HEADER_NEXT.test(lines[i + 1]!.trim())) return i;
    // A quoted block that runs to the end (interleaved answers below quotes are new text).
    if (line.startsWith(">") && i >= quotedTail) return i;
  }
  return -1;
}

function isQuotedOrBlank(line: string): boolean {
  const trimmed = line.trim();
  return trimmed === "" || trimmed.startsWith(">");
}
