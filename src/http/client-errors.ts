import { STATUS_CODES, maxHeaderSize } from "node:http";
import type { Duplex } from "node:stream";
import { problem } from "./problems.js";

/** What each refusal of Node's HTTP parser says; any other code is a request line or header that is not HTTP. */
const DETAILS: Record<string, string> = {
  HPE_INVALID_CONTENT_LENGTH: "The Content-Length is not a number of bytes.",
  HPE_INVALID_TRANSFER_ENCODING: "The request has both a Content-Length and a Transfer-Encoding, or a Transfer-Encoding that does not end in chunked.",
  HPE_INVALID_URL: "The URL is not valid: percent-encode spaces and any byte past ASCII.",
  // What a space in the URL leads to: the parser takes what follows it for the HTTP version.
  HPE_INVALID_CONSTANT: "The request line is not METHOD URL HTTP/1.1: percent-encode spaces in the URL.",
  HPE_INVALID_HEADER_TOKEN: "A header field's name or value is not valid HTTP.",
  HPE_HEADER_OVERFLOW: `The request's header fields are larger than the server takes (${Math.round(maxHeaderSize / 1024)} KiB).`,
};

/**
 * The answer to a request Node's HTTP parser refused before Fastify saw it (a Content-Length that
 * is no number, a space in the URL, headers past the limit), or that took longer to arrive than
 * REQUEST_TIMEOUT_MS: the problem document and Request-Id every other answer has, where Node and
 * Fastify would write a bare status or bare JSON. The connection is closed, since the parser
 * cannot tell where the next request would start. A socket already gone gets nothing.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex, requestId: string): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const answer = problemFor(error.code, requestId);
  const body = JSON.stringify(answer);
  const head = [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}`,
    "Content-Type: application/problem+json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `Request-Id: ${requestId}`,
    "Connection: close",
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}

function problemFor(code: string | undefined, requestId: string) {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return problem(408, "request_timeout", "Request timeout", "The request, headers and body, did not arrive within the server's time limit (REQUEST_TIMEOUT_MS).", requestId);
  }
  const status = code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
  return problem(status, "invalid_request", "Invalid request", DETAILS[code ?? ""] ?? "The request could not be read as HTTP.", requestId);
}
