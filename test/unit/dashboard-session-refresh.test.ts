import { APIConnectionError, APIError } from "mailroom";
import { describe, expect, it } from "vitest";
import type { Session } from "../../dashboard/src/auth/auth-api.js";
import { afterFailedReload, signedOutSession } from "../../dashboard/src/lib/session-refresh.js";

/**
 * What the dashboard keeps when a reload of its session fails (dashboard/src/lib/session-refresh.ts):
 * the page it is on, unless the server said the session has ended.
 */
const SESSION: Session = {
  signed_in: true,
  user: { id: "usr_1", object: "user", email: "ada@acme.example", name: "Ada", created_at: "2026-01-01T00:00:00Z" },
  workspaces: [{ id: "ws_1", object: "workspace_membership", name: "Acme", role: "owner", joined_at: "2026-01-01T00:00:00Z" }],
  csrf_token: "csrf",
  signup: "invitation_only",
};
const problem = (status: number, code: string) => APIError.from(status, { type: "about:blank", title: code, status, code, request_id: "req_test" }, new Headers());

describe("afterFailedReload", () => {
  it("keeps the session the page had, with the failure, when the server could not be reached or failed", () => {
    for (const error of [new APIConnectionError("Could not reach the Mailroom server."), problem(503, "unavailable"), problem(429, "too_many_requests")]) {
      expect(afterFailedReload({ session: SESSION, failure: undefined }, error)).toEqual({ session: SESSION, failure: error });
    }
  });

  it("signs the page out when the server answered that the session has ended (401), keeping the CSRF token and sign-up mode", () => {
    expect(afterFailedReload({ session: SESSION, failure: undefined }, problem(401, "unauthenticated"))).toEqual({
      session: { signed_in: false, user: null, workspaces: [], csrf_token: "csrf", signup: "invitation_only" },
      failure: undefined,
    });
  });

  it("has only the failure to show while there has never been a session", () => {
    const error = new APIConnectionError("Could not reach the Mailroom server.");
    expect(afterFailedReload({ session: undefined, failure: undefined }, error)).toEqual({ session: undefined, failure: error });
    expect(afterFailedReload({ session: undefined, failure: undefined }, problem(401, "unauthenticated"))).toMatchObject({ session: undefined });
  });
});

describe("signedOutSession", () => {
  it("is what GET /auth/session answers once signed out", () => {
    expect(signedOutSession(SESSION)).toEqual({ signed_in: false, user: null, workspaces: [], csrf_token: "csrf", signup: "invitation_only" });
  });
});
