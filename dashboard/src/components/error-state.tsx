import { APIConnectionError, APIError, RateLimitError, type FieldError } from "mailroom";
import { Link, useLocation } from "wouter";
import { useOptionalWorkspace } from "../api/api-context";
import { loggedEnvironment } from "../api/client";
import { isAtOrBelow } from "../lib/forms";
import { REQUEST_LOG_ROLE, isRequestLogPath, requestLogHref } from "../lib/request-log";
import { hasRole } from "../lib/roles";

interface DescribedError {
  title: string;
  detail: string | undefined;
  code: string | undefined;
  requestId: string | undefined;
  fieldErrors: FieldError[];
  permission: boolean;
}

// Codes that mean "you may not", not "something broke": shown with what to do about it.
const PERMISSION_CODES = new Set(["insufficient_role", "insufficient_permission", "user_token_required"]);

/** Any thrown value as what a person needs: what went wrong, and what to quote when asking for help. */
export function describeError(error: unknown): DescribedError {
  if (error instanceof APIError) {
    const permission = error.status === 403 && PERMISSION_CODES.has(error.code);
    return {
      title: permission ? "You don't have permission to do this" : error.title,
      detail: error.detail,
      code: error.code,
      requestId: error.request_id,
      fieldErrors: error.errors,
      permission,
    };
  }
  const empty = { code: undefined, requestId: undefined, fieldErrors: [], permission: false };
  if (error instanceof APIConnectionError) return { ...empty, title: "Could not reach Mailroom", detail: error.message };
  return { ...empty, title: "Something went wrong", detail: error instanceof Error ? error.message : String(error) };
}

/**
 * A failed request's id, linked to its entry in the request log when the member may read the log
 * and the request is in the environment shown: a problem `/v1` answered in it, not one of the
 * log's own reads (which it does not record).
 */
function RequestId({ error, requestId }: { error: unknown; requestId: string }) {
  const choice = useOptionalWorkspace();
  const [location] = useLocation();
  const logged =
    choice !== null &&
    hasRole(choice.workspace.role, REQUEST_LOG_ROLE) &&
    loggedEnvironment(error) === choice.environment &&
    !isRequestLogPath(location);
  const id = <code>{requestId}</code>;
  return logged ? (
    <Link href={requestLogHref(requestId)} title="This request in the request log (it appears there about a second after its answer)">
      {id}
    </Link>
  ) : (
    id
  );
}

interface ErrorStateProps {
  error: unknown;
  /** What was being attempted ("Could not load messages"); the problem's own title follows it. */
  title?: string;
  onRetry?: () => void;
  /** Inside a form or a dialog: less padding, no page-level frame. */
  compact?: boolean;
  /** Pointers whose problems the form shows under their fields (`/url`): not listed again here. */
  shownAtFields?: readonly string[];
  /**
   * For a person signing in, up or accepting an invitation rather than a developer: a refusal
   * (4xx: a wrong password, too many attempts, an address already registered) is said in words
   * only, with how long to wait when the server said; its code and request id, which mean nothing
   * to them, are left out. A failure of the server (5xx) or the network keeps them: that is when
   * support needs the request id.
   */
  inWords?: boolean;
}

/** How long `Retry-After` asks to wait, in words: "Try again in 7 minutes." */
function waitInWords(seconds: number): string {
  if (seconds < 60) return `Try again in ${seconds} ${seconds === 1 ? "second" : "seconds"}.`;
  const minutes = Math.ceil(seconds / 60);
  return `Try again in ${minutes} ${minutes === 1 ? "minute" : "minutes"}.`;
}

/** A failed request: the problem's title, its detail or failing fields, its code and request id, and a Retry button. */
export function ErrorState({ error, title, onRetry, compact = false, shownAtFields = [], inWords = false }: ErrorStateProps) {
  const problem = describeError(error);
  const listed = problem.fieldErrors.filter(({ pointer }) => !shownAtFields.some((shown) => isAtOrBelow(pointer, shown)));
  const wordsOnly = inWords && error instanceof APIError && error.status < 500;
  // The server's detail says how long to wait already ("try again in 7 min."); a 429 from
  // something in front of it may only have the header.
  const wait = wordsOnly && error instanceof RateLimitError && error.retry_after !== undefined && !/try again/i.test(problem.detail ?? "") ? waitInWords(error.retry_after) : undefined;
  const classes = ["error-state", compact ? "error-state--compact" : "", problem.permission ? "error-state--permission" : ""];
  return (
    <div role="alert" className={classes.filter(Boolean).join(" ")}>
      <p className="error-state__title">{title ?? problem.title}</p>
      {title && <p className="error-state__detail">{problem.title}</p>}
      {/* With field errors the list says what and where; the detail would say it again. */}
      {problem.detail && problem.fieldErrors.length === 0 && <p className="error-state__detail">{problem.detail}</p>}
      {wait && <p className="error-state__detail">{wait}</p>}
      {problem.permission && (
        <p className="error-state__detail">Your role in this workspace does not allow this. Ask an admin or an owner of the workspace.</p>
      )}
      {listed.length > 0 && (
        <ul className="error-state__fields">
          {listed.map((field) => (
            <li key={`${field.location}${field.pointer}`}>
              <code>{field.pointer || field.location}</code> {field.message}
            </li>
          ))}
        </ul>
      )}
      {!wordsOnly && (problem.code || problem.requestId) && (
        <p className="error-state__meta">
          {problem.code && (
            <span>
              Code <code>{problem.code}</code>
            </span>
          )}
          {problem.requestId && (
            <span>
              Request ID <RequestId error={error} requestId={problem.requestId} />
            </span>
          )}
        </p>
      )}
      {onRetry && (
        <button type="button" className="button" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}
