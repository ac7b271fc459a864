import type { Attachment } from "mailparser";

/**
 * A parsed part's media type, lower-case. RFC 2045 §5.2: a part without a Content-Type, or with
 * one that cannot be read, is text/plain. mailparser gives `false` for a part whose field is
 * empty, whatever its types say, and a `.toLowerCase()` of that threw outside the inbound server's
 * handling: a report with such a part was answered 451 at every retry and never recorded.
 */
export function mediaTypeOf(part: Pick<Attachment, "contentType">): string {
  const type: unknown = part.contentType;
  return typeof type === "string" && type !== "" ? type.toLowerCase() : "text/plain";
}
