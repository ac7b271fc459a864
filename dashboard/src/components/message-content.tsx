import type { Message } from "mailroom";
import { useApi } from "../api/api-context";
import { useRequest } from "../api/use-request";
import { formatDateTime, formatDays } from "../lib/format";
import { KEPT_AFTER_REMOVAL } from "../lib/retention";
import { EmailPreview } from "./email-preview";

/**
 * A sent message's content, as the message page and the inbox show it: the preview, or, once the
 * workspace's content retention has removed it, a notice that says when and why in its place.
 * Its `html`, `text` and `mime` are null then, which the preview would read as a message that
 * never had them.
 */
export function MessageContent({ message }: { message: Message }) {
  if (message.content_removed_at === null) {
    // Keyed per message, so that loading remote images is never carried over to the next one.
    return <EmailPreview key={message.id} html={message.html} text={message.text} mime={message.mime} />;
  }
  return <RemovedContent removedAt={message.content_removed_at} />;
}

function RemovedContent({ removedAt }: { removedAt: string }) {
  const api = useApi();
  // Only to name the retention in days: every member may read the workspace, and while it loads
  // (or should it fail) the notice goes without. It is the setting as it is now, which may have
  // changed since the removal, so the notice says what it is rather than what it was.
  const workspace = useRequest((signal) => api.call((mr) => mr.workspace.get({ signal })), [api]);
  const days = workspace.data?.content_retention_days ?? null;
  return (
    <div className="notice" role="note" data-testid="content-removed" aria-busy={workspace.loading}>
      <p>
        <strong>
          Content removed on {formatDateTime(removedAt)} by the workspace&apos;s content retention
          {days !== null && `, which keeps a message's content ${formatDays(days)}`}.
        </strong>
      </p>
      <p>
        Its HTML, text, raw MIME source and attachments&apos; contents are gone and cannot be brought back; {KEPT_AFTER_REMOVAL} are kept.
      </p>
    </div>
  );
}
