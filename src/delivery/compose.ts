import type { MessageRecord } from "../db/repositories/messages.js";
import type { TrackedParts } from "../tracking/links.js";
import { signMessage, type DkimSigner } from "./dkim.js";
import { renderMessage, type RenderedMessage } from "./render.js";

/** Everything needed to turn a stored message into what one recipient's server receives. */
export interface ComposeRequest {
  message: MessageRecord;
  /** The Date header's instant (the signatures' t= is the real time of signing, as verifiers expect). */
  now: number;
  /** The recipient's tracking tokens in the HTML, headers and reply address; none when untracked. */
  tracked?: TrackedParts;
  /** The sending domain's DKIM keys; empty: the message goes unsigned. */
  signers: readonly DkimSigner[];
}

/** Composes a message, one way or another (on this thread, or on a pool of threads: ComposeThreads). */
export type Compose = (request: ComposeRequest) => Promise<RenderedMessage>;

/** The message's MIME, DKIM-signed with each of the signers, and the text part it carries. */
export const composeMessage: Compose = async ({ message, now, tracked, signers }) => {
  const rendered = await renderMessage(message, now, tracked);
  if (signers.length === 0) return rendered;
  const signed = await signMessage(Buffer.from(rendered.mime, "utf8"), signers);
  return { mime: signed.toString("utf8"), text: rendered.text };
};
