import { toIso } from "../domain/clock.js";
import type { Principal } from "../domain/environments.js";
import { simulatedOutcome } from "../domain/simulator.js";
import { MessagesRepository, type MessageRecord } from "../db/repositories/messages.js";
import type { SuppressionsRepository } from "../db/repositories/suppressions.js";
import { scopeOf } from "./api-keys.js";
import type { AttachmentUrls } from "./attachment-urls.js";
import type { MessagesService } from "./messages.js";
import type { components } from "../../generated/v1.js";

type CreateMessageRequest = components["schemas"]["CreateMessageRequest"];
type MessagePreview = components["schemas"]["MessagePreview"];

/** The worker's renderer (delivery/compose.ts, unsigned; on the compose threads when there are any), handed in so that services do not import delivery. */
export type RenderMessage = (message: MessageRecord, now: number) => Promise<{ mime: string; text: string | null }>;

/**
 * previewMessage: what createMessage would send for a body, decided by the same code. The
 * message is checked by MessagesService.check (so a preview fails exactly where a send would),
 * rendered by the worker's own renderer, and its recipients looked up in the suppression list
 * the worker consults; nothing is written.
 */
export class MessagePreviewService {
  constructor(
    private readonly messages: MessagesService,
    private readonly suppressions: SuppressionsRepository,
    private readonly render: RenderMessage,
    private readonly attachmentUrls: AttachmentUrls,
  ) {}

  /** One request of AttachmentUrls.forRequest, whichever door calls it: the fetched files are held while they are rendered. */
  async preview(principal: Principal, input: CreateMessageRequest): Promise<MessagePreview> {
    return this.attachmentUrls.forRequest(() => this.previewed(principal, input));
  }

  private async previewed(principal: Principal, input: CreateMessageRequest): Promise<MessagePreview> {
    const record = await this.messages.check(principal, input);
    const [suppressions, rendered] = await Promise.all([
      this.suppressions.findByEmails(scopeOf(principal), record.recipients.map((r) => r.email)),
      this.render(record, record.created_at),
    ]);
    const { from, to, cc, bcc, reply_to, subject, template, html, headers, attachments, tags, metadata, tracking, scheduled_at, expires_at } = MessagesRepository.toWire(record);
    return {
      object: "message_preview",
      environment: principal.environment,
      ...{ from, to, cc, bcc, reply_to, subject, template, html, text: rendered.text, headers, attachments, tags, metadata, tracking, scheduled_at, expires_at },
      recipients: record.recipients.map(({ email, name, type }) => {
        // Keyed as the worker looks them up when it skips suppressed recipients.
        const suppression = suppressions.get(email.toLowerCase());
        return {
          email,
          name,
          type,
          suppression: suppression ? { id: suppression.id, reason: suppression.reason, created_at: toIso(suppression.created_at) } : null,
          simulated_outcome: principal.environment === "sandbox" && !suppression ? simulatedOutcome(email) : null,
        };
      }),
      mime: rendered.mime,
      size_bytes: Buffer.byteLength(rendered.mime),
    };
  }
}
