import type { IncomingHttpHeaders } from "node:http";
import { DomainError } from "../domain/errors.js";

// fatal: a byte sequence that is not UTF-8 throws instead of becoming U+FFFD, which would be
// stored and sent as if the client had written it.
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A JSON request body as text. RFC 8259 §8.1: JSON exchanged between systems is UTF-8, and a
 * charset parameter on application/json means nothing (§11), so the bytes are read as UTF-8
 * whatever the parameter says, and bytes that are not UTF-8 are malformed JSON, not a
 * replacement character in the stored message.
 */
export function jsonBodyText(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw new DomainError("bad_request", "invalid_json", "Malformed JSON", "The request body is not valid UTF-8. JSON is sent in UTF-8 (RFC 8259), whatever the Content-Type's charset parameter says.");
  }
}

/**
 * Refuses a request body sent with a content coding. The server decodes none (a compressed
 * request body is rare, and decompressing it unbounded is a way to exhaust memory), and reading
 * compressed bytes as JSON would fail with a misleading "not valid JSON", or, for a body only
 * labelled as compressed, accept what the client believes it did not send. RFC 9110 §15.5.16:
 * a coding the server does not support is 415.
 */
export function refuseContentEncoding(headers: IncomingHttpHeaders): void {
  const encoding = headers["content-encoding"]?.trim();
  if (encoding === undefined || encoding === "" || encoding.toLowerCase() === "identity") return;
  throw new DomainError("unsupported_media", "unsupported_media_type", "Unsupported media type", `The request body was sent with Content-Encoding ${encoding}; send it uncompressed (no Content-Encoding, or identity).`);
}
