import * as base64 from "nodemailer/lib/base64/index.js";
import type MimeNode from "nodemailer/lib/mime-node/index.js";
import * as qp from "nodemailer/lib/qp/index.js";

/**
 * The bytes of a MIME tree that nodemailer's MailComposer compiled, the same bytes as the tree's
 * own `build()` gives, but made in one synchronous pass.
 *
 * `build()` streams every node through its own chain of streams (a PassThrough per content, a
 * pipeline with an AbortController per encoder, a setImmediate between nodes), which for a
 * transactional message costs several times more than the text it produces (~250 us against
 * ~40 us for a 3.7 KB multipart/alternative message on the 2-core dev machine) and spreads one
 * message over many turns of the event loop. Everything that decides what the bytes are stays
 * nodemailer's: the tree, the headers (`buildHeaders()`: address and RFC 2047 encoding, folding),
 * the transfer encoding each node chose, and the quoted-printable and base64 encoders. Only the
 * assembly is done here, exactly as `MimeNode.stream()` does it.
 *
 * A tree holding anything this pass does not handle (content from a stream, a file or a URL, a
 * raw node, quoted-printable outside text) is built by nodemailer's `build()`. Mailroom's
 * messages never hold those (attachments arrive as base64 in the request), but the fallback keeps
 * this function correct for any tree. test/unit/mime-build.test.ts compares both paths byte for
 * byte over a corpus of messages.
 */
export async function buildMime(root: MimeNode): Promise<Buffer> {
  if (!assemblable(root)) return root.build();
  const parts: Array<string | Buffer> = [];
  assemble(root, parts);
  const mime = Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "utf8") : part)));
  return withFinalLineBreak(mime);
}

/** Whether every node of the tree has content this pass can encode (or none). */
function assemblable(node: MimeNode): boolean {
  const raw = (node as unknown as { _raw?: unknown })._raw;
  if (raw !== undefined && raw !== null && raw !== false) return false;
  const { content } = node;
  if (content !== undefined && content !== null && content !== "" && typeof content !== "string" && !Buffer.isBuffer(content)) return false;
  // Outside text, quoted-printable is only ever asked for (getTransferEncoding() picks base64),
  // and nodemailer's encoder then keeps a lone CR or LF as data.
  const asked = String(node.getHeader("Content-Transfer-Encoding") ?? "").trim().toLowerCase();
  if (content && asked === "quoted-printable" && !/^text\//i.test(String(node.getHeader("Content-Type") ?? ""))) return false;
  return node.childNodes.every(assemblable);
}

/** MimeNode.stream(), synchronously: headers, encoded content, then each child between boundaries. */
function assemble(node: MimeNode, parts: Array<string | Buffer>): void {
  // buildHeaders() decides the transfer encoding and, for a multipart node, sets its boundary.
  // Its text is written as UTF-8, as build() writes it: nodemailer encodes most non-ASCII as RFC
  // 2047 words, but not all (a value such as "xčĊ" is left as it is), and written as Latin-1
  // such a character would keep only its low byte: U+010A would become a line feed.
  parts.push(node.buildHeaders() + "\r\n\r\n");
  if (node.content) parts.push(encodedContent(node, node.content as string | Buffer));
  if (!node.multipart) return;
  node.childNodes.forEach((child, i) => {
    parts.push(`${i > 0 ? "\r\n" : ""}--${String(node.boundary)}\r\n`);
    assemble(child, parts);
  });
  parts.push(`\r\n--${String(node.boundary)}--\r\n`);
}

function encodedContent(node: MimeNode, content: string | Buffer): string | Buffer {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  // buildHeaders() has just written the node's transfer encoding into its header (the choice
  // scans the content: not done twice).
  switch (String(node.getHeader("Content-Transfer-Encoding")).toLowerCase()) {
    case "base64":
      return base64.wrap(base64.encode(bytes), 76);
    case "quoted-printable":
      // assemblable() let only text through: its line breaks are line breaks (not "binary").
      return qp.wrap(qp.encode(bytes), 76);
    default:
      // 7bit or 8bit: as is
      return bytes;
  }
}

/** The stream's last stage (LastNewline): the message ends with a line break. */
function withFinalLineBreak(mime: Buffer): Buffer {
  const last = mime[mime.length - 1];
  if (last === 0x0a) return mime;
  return Buffer.concat([mime, Buffer.from(last === 0x0d ? "\n" : "\r\n", "latin1")]);
}
