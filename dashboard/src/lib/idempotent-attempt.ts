import { APIError, newIdempotencyKey } from "mailroom";

/** A request of one body under one Idempotency-Key. */
export interface SendAttempt {
  /** The body as JSON, to know it again. */
  body: string;
  key: string;
}

/**
 * The attempt for sending `body`: the previous one's key when it is the same body (the previous
 * attempt may have been carried out without its answer arriving, and the server then replays
 * that answer rather than doing it a second time), else a new key.
 */
export function sendAttempt(previous: SendAttempt | null, body: unknown, newKey: () => string = newIdempotencyKey): SendAttempt {
  const json = JSON.stringify(body);
  return previous?.body === json ? previous : { body: json, key: newKey() };
}

/**
 * Whether a failed request may still have been carried out, so that trying again must carry the
 * same Idempotency-Key: no answer came (a network failure, a timeout), the server failed (5xx),
 * or the first request was still running (409 idempotency_key_in_use). Any other answer refused
 * it; a new key then, so that a refusal the server keeps (a 404, a 409 conflict) is not replayed
 * to a later try (docs/idempotency.md).
 */
export function mayHaveBeenSent(error: unknown): boolean {
  if (!(error instanceof APIError)) return true;
  return error.status >= 500 || error.code === "idempotency_key_in_use";
}

/**
 * One form's creating requests (a message, an endpoint, a key, an invitation, a workspace), so
 * that pressing its button again after a lost answer cannot create a second one. The SDK's own
 * retries keep their call's key, but a new call gets a new key; this carries the key over from
 * one press to the next while the body is the same and the last press may have been carried out,
 * and starts afresh after a success or a refusal.
 */
export class RetrySafeRequests {
  private attempt: SendAttempt | null = null;

  constructor(private readonly newKey: () => string = newIdempotencyKey) {}

  /** Runs `request` with the Idempotency-Key for `body` (the JSON the request sends, or anything that decides where it goes too). */
  async send<T>(body: unknown, request: (idempotencyKey: string) => Promise<T>): Promise<T> {
    const attempt = sendAttempt(this.attempt, body, this.newKey);
    this.attempt = attempt;
    try {
      const answer = await request(attempt.key);
      this.forget(attempt);
      return answer;
    } catch (error) {
      if (!mayHaveBeenSent(error)) this.forget(attempt);
      throw error;
    }
  }

  // Only this attempt: a press with another body may have started one since.
  private forget(attempt: SendAttempt): void {
    if (this.attempt === attempt) this.attempt = null;
  }
}

/** Every creating form's RetrySafeRequests, by form and scope, for as long as the page is loaded. */
const formsRequests = new Map<string, RetrySafeRequests>();

/**
 * The RetrySafeRequests of one creating form (`"createWebhook"`) in one workspace and environment:
 * the scope of the token its requests are sent with, which is the server's scope for their
 * Idempotency-Keys (src/http/idempotency.ts). Every form has one, New workspace too (sent with
 * the token of the workspace shown): a key carried into another scope would be new there, and do
 * the thing a second time. They outlive the form's dialog: a member who closes it after a lost
 * answer and opens it again to send the same thing sends the same key, so the server replays
 * what the first press did. A reload forgets them.
 */
export function retrySafeRequests(form: string, scope: { workspaceId: string; environment: string }): RetrySafeRequests {
  const name = `${form} ${scope.workspaceId} ${scope.environment}`;
  let requests = formsRequests.get(name);
  if (requests === undefined) formsRequests.set(name, (requests = new RetrySafeRequests()));
  return requests;
}
