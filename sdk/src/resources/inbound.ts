import type { APIPromise } from "../api-promise.js";
import type { RequestOptions } from "../client.js";
import type { InboundMessage } from "../types.js";
import { Resource } from "./resource.js";

/**
 * Mail that came back to Mailroom (tag `Inbound`): replies, parsed, authenticated and threaded
 * to the message they answer. A message's replies are listed with `mr.messages.listReplies`.
 */
export class Inbound extends Resource {
  /** `getInboundMessage`: the reply with its text, quoted history, attachments' metadata and SPF/DKIM/DMARC results. */
  get(inboundId: string, options?: RequestOptions): APIPromise<InboundMessage> {
    return this.client.unwrap(this.client.http.GET("/v1/inbound/{inbound_id}", { params: { path: { inbound_id: inboundId } }, ...this.client.init(options) }));
  }

  /**
   * `getInboundAttachment`: the bytes of attachment `index` (its `index` in `attachments`), as
   * received. Its file name and media type are in the inbound message's `attachments`.
   */
  async getAttachment(inboundId: string, index: number, options?: RequestOptions): Promise<Uint8Array> {
    const content = await this.client.unwrap(
      this.client.http.GET("/v1/inbound/{inbound_id}/attachments/{attachment_index}", {
        params: { path: { inbound_id: inboundId, attachment_index: index } },
        // Bytes, not JSON; error answers are still parsed as problems.
        parseAs: "arrayBuffer",
        ...this.client.init(options),
      }),
    );
    // An empty attachment comes back with Content-Length: 0, which openapi-fetch answers as no data.
    return new Uint8Array((content as ArrayBuffer | undefined) ?? new ArrayBuffer(0));
  }
}
