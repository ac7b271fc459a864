import type { Services } from "../runtime.js";
import type { HandlerMap } from "./handler-types.js";
import { pageOf, principalOf } from "./request-parts.js";

type InboundOperation = "listMessageReplies" | "getInboundMessage" | "getInboundAttachment";

/** Replies received by the inbound SMTP server: thin translations to the inbound service. */
export function createInboundHandlers(services: Pick<Services, "inbound">): Pick<HandlerMap, InboundOperation> {
  const { inbound } = services;
  return {
    listMessageReplies: async (req) => inbound.listReplies(principalOf(req), req.params.message_id, pageOf(req.query)),

    getInboundMessage: async (req) => inbound.get(principalOf(req), req.params.inbound_id),

    getInboundAttachment: async (req, reply) => {
      const attachment = await inbound.attachment(principalOf(req), req.params.inbound_id, req.params.attachment_index);
      // Bytes someone else wrote: always a download, never rendered (or sniffed) on the API's origin.
      return reply
        .type("application/octet-stream")
        .header("content-disposition", contentDisposition(attachment.filename ?? `attachment-${req.params.attachment_index}`))
        .header("x-content-type-options", "nosniff")
        .send(attachment.content);
    },
  };
}

/** RFC 6266: an ASCII fallback name, and the exact name in RFC 8187 encoding when it is not ASCII. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  if (ascii === filename) return `attachment; filename="${ascii}"`;
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
