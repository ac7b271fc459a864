import type { InboundAttachment, InboundAuthenticationResult, InboundMessage } from "mailroom";
import { useApi } from "../api/api-context";
import { collectPages } from "../api/collect-pages";
import { useAction, useRequest } from "../api/use-request";
import { ActionButton } from "../components/action-button";
import { EmailPreview } from "../components/email-preview";
import { ErrorState } from "../components/error-state";
import { Loaded } from "../components/loaded";
import { formatCount, formatDateTime } from "../lib/format";

// Replies to one message are few; past this the card says so rather than page on.
const REPLY_CAP = 200;

/** How a reply was matched to the message, in words. */
const THREADED_BY: Record<InboundMessage["threaded_by"], string> = {
  reply_address: "Threaded by its reply address",
  in_reply_to: "Threaded by In-Reply-To",
  simulated: "Simulated by the sandbox",
};

/** One SPF, DKIM or DMARC result; anything but pass or a plain "none" deserves a second look. */
function AuthResult({ check, result }: { check: string; result: InboundAuthenticationResult }) {
  return (
    <span className={`badge badge--auth badge--auth-${result}`} data-testid={`auth-${check.toLowerCase()}`}>
      {check} {result}
    </span>
  );
}

/**
 * Saves an attachment the way a browser saves a download: its bytes, through the SDK, as a
 * Blob behind a temporary link. The name and type are the ones the sender gave.
 */
function Attachment({ inboundId, attachment }: { inboundId: string; attachment: InboundAttachment }) {
  const api = useApi();
  const name = attachment.filename ?? `attachment-${attachment.index}`;
  const download = useAction(async () => {
    const content = await api.call((mr) => mr.inbound.getAttachment(inboundId, attachment.index));
    const url = URL.createObjectURL(new Blob([content as Uint8Array<ArrayBuffer>], { type: attachment.content_type }));
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.click();
    // After the click has started the download; revoking at once can cancel it in some browsers.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });
  return (
    <li data-testid="reply-attachment">
      {name}{" "}
      <span className="muted">
        ({attachment.content_type}, {formatCount(attachment.size)} bytes)
      </span>{" "}
      <ActionButton label={`Download ${name}`} pendingLabel="Downloading…" pending={download.pending} variant="plain" onClick={() => void download.run()} />
      {download.error !== undefined && <ErrorState error={download.error} title={`Could not download ${name}`} compact />}
    </li>
  );
}

function Reply({ reply }: { reply: InboundMessage }) {
  return (
    <article className="reply" data-testid="reply">
      <header className="reply__header">
        <p>
          <strong data-testid="reply-from">{reply.from}</strong> <span className="muted">· {formatDateTime(reply.received_at)}</span>
        </p>
        <p data-testid="reply-subject">{reply.subject || "(no subject)"}</p>
        <p className="reply__checks">
          <AuthResult check="SPF" result={reply.authentication.spf} /> <AuthResult check="DKIM" result={reply.authentication.dkim} />{" "}
          <AuthResult check="DMARC" result={reply.authentication.dmarc} />{" "}
          <span className="muted">
            {THREADED_BY[reply.threaded_by]}
            {reply.recipient && <> (recipient {reply.recipient})</>}
          </span>
        </p>
      </header>
      {reply.content_removed_at !== null ? (
        <p className="muted" data-testid="reply-removed">
          Content removed on {formatDateTime(reply.content_removed_at)} by the workspace&apos;s content retention: its text, HTML and attachments&apos; contents are gone.
        </p>
      ) : reply.text !== null ? (
        <p className="reply__text" data-testid="reply-text">
          {reply.text}
        </p>
      ) : reply.html ? (
        // No text at all (a reply received before text was derived from HTML): its HTML, shown as
        // a sent message's is, sandboxed, remote images blocked.
        <EmailPreview html={reply.html} text={null} />
      ) : (
        <p className="muted">This reply has no text.</p>
      )}
      {reply.quoted_text && (
        // Collapsed, as mail clients do: the history is the message the reader already knows.
        <details className="reply__quoted" data-testid="reply-quoted">
          <summary>Quoted history</summary>
          <p className="reply__text">{reply.quoted_text}</p>
        </details>
      )}
      {reply.content_removed_at === null && reply.text !== null && reply.html && (
        // The text above is the reply's new part; its HTML (often the only body, the text then
        // derived from it) is there as written, collapsed like the history, sandboxed like a sent
        // message's, remote images blocked.
        <details className="reply__quoted" data-testid="reply-html">
          <summary>HTML version</summary>
          <EmailPreview html={reply.html} text={null} />
        </details>
      )}
      {reply.attachments.length > 0 && (
        <ul className="plain-list reply__attachments">
          {reply.attachments.map((attachment) => (
            <Attachment key={attachment.index} inboundId={reply.id} attachment={attachment} />
          ))}
        </ul>
      )}
    </article>
  );
}

/** The replies threaded to a message (listMessageReplies), oldest first. */
export function Replies({ messageId }: { messageId: string }) {
  const api = useApi();
  const replies = useRequest(
    (signal) =>
      collectPages((after) => api.call((mr) => mr.messages.listReplies(messageId, { limit: 100, ...(after ? { after } : {}) }, { signal })), {
        cap: REPLY_CAP,
      }),
    [api, messageId],
  );
  return (
    <Loaded state={replies} what="replies" compact>
      {({ items, capped }) =>
        items.length === 0 ? (
          <p className="muted">No replies yet. Replies arrive when the message tracks them (its reply address) or answer its Message-ID.</p>
        ) : (
          <>
            {items.map((reply) => (
              <Reply key={reply.id} reply={reply} />
            ))}
            {capped && <p className="notice">Only the first {formatCount(REPLY_CAP)} replies are shown.</p>}
          </>
        )
      }
    </Loaded>
  );
}
