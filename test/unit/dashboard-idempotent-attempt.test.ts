import { APIConnectionError, APIError, APITimeoutError } from "mailroom";
import { describe, expect, it } from "vitest";
import { mayHaveBeenSent, RetrySafeRequests, retrySafeRequests, sendAttempt } from "../../dashboard/src/lib/idempotent-attempt.js";

/**
 * The Idempotency-Key of the dashboard's creating forms (dashboard/src/lib/idempotent-attempt.ts):
 * Send a test, Add endpoint, Create key, Invite and Create workspace. Pressed again after an
 * answer that never came, a form sends the same key, so the server replays what it did rather
 * than doing it twice. The forms themselves are driven in the browser
 * (test/e2e/retry-safe-creates.test.ts, test/e2e/template-test-send.test.ts).
 */
const refusal = (status: number, code: string) => APIError.from(status, { type: "about:blank", title: code, status, code, request_id: "req_test" }, new Headers());

/** Keys `key-1`, `key-2`, … in order. */
function keys(): () => string {
  let issued = 0;
  return () => `key-${++issued}`;
}

/** A RetrySafeRequests whose requests record their keys and fail with `outcomes` in turn, then succeed. */
function form(...outcomes: unknown[]) {
  const requests = new RetrySafeRequests(keys());
  const sent: string[] = [];
  const press = (body: unknown) =>
    requests.send(body, async (key) => {
      sent.push(key);
      const outcome = outcomes.shift();
      if (outcome !== undefined) throw outcome;
      return key;
    });
  return { press, sent };
}

describe("sendAttempt", () => {
  it("keeps the key for the same body and takes a new one for another body, or for the same body with no attempt before it", () => {
    const newKey = keys();
    const first = sendAttempt(null, { name: "Orders", url: "https://acme.example/hook" }, newKey);
    expect(sendAttempt(first, { name: "Orders", url: "https://acme.example/hook" }, newKey)).toBe(first);
    expect(sendAttempt(first, { name: "Orders", url: "https://acme.example/other" }, newKey).key).not.toBe(first.key);
    expect(sendAttempt(null, { name: "Orders", url: "https://acme.example/hook" }, newKey).key).not.toBe(first.key);
  });
});

describe("mayHaveBeenSent", () => {
  it("counts a failure without an answer, a 5xx or a request still running as maybe carried out, and a refusal as not", () => {
    expect(mayHaveBeenSent(new APIConnectionError())).toBe(true);
    expect(mayHaveBeenSent(new APITimeoutError(60_000))).toBe(true);
    expect(mayHaveBeenSent(new TypeError("Failed to fetch"))).toBe(true);
    expect(mayHaveBeenSent(refusal(500, "internal_error"))).toBe(true);
    expect(mayHaveBeenSent(refusal(503, "service_unavailable"))).toBe(true);
    expect(mayHaveBeenSent(refusal(409, "idempotency_key_in_use"))).toBe(true);
    expect(mayHaveBeenSent(refusal(422, "validation_failed"))).toBe(false);
    expect(mayHaveBeenSent(refusal(429, "monthly_quota_exceeded"))).toBe(false);
    expect(mayHaveBeenSent(refusal(403, "insufficient_role"))).toBe(false);
    expect(mayHaveBeenSent(refusal(409, "already_a_member"))).toBe(false);
  });
});

describe("RetrySafeRequests", () => {
  const body = { email: "grace@acme.example", role: "admin" };

  it("sends the same key again when the same body follows a lost answer or a 5xx", async () => {
    const { press, sent } = form(new APIConnectionError(), refusal(503, "service_unavailable"));
    await expect(press(body)).rejects.toThrow(APIConnectionError);
    await expect(press({ ...body })).rejects.toThrow("503");
    await expect(press(body)).resolves.toBe("key-1");
    expect(sent).toEqual(["key-1", "key-1", "key-1"]);
  });

  it("takes a new key after a success, so that creating a second one on purpose is possible", async () => {
    const { press, sent } = form();
    await press(body);
    await press(body);
    expect(sent).toEqual(["key-1", "key-2"]);
  });

  it("takes a new key after a refusal, so that a kept refusal is not replayed to the next try", async () => {
    const { press, sent } = form(refusal(422, "validation_failed"));
    await expect(press(body)).rejects.toThrow("422");
    await press(body);
    expect(sent).toEqual(["key-1", "key-2"]);
  });

  it("takes a new key for a changed body after a lost answer, as that is another request", async () => {
    const { press, sent } = form(new APIConnectionError());
    await expect(press(body)).rejects.toThrow(APIConnectionError);
    await press({ ...body, role: "developer" });
    expect(sent).toEqual(["key-1", "key-2"]);
  });
});

describe("retrySafeRequests", () => {
  it("gives a form opened again the requests it had, and another form, workspace or environment their own", () => {
    const sandbox = { workspaceId: "ws_acme", environment: "sandbox" };
    const webhooks = retrySafeRequests("createWebhook", sandbox);
    expect(retrySafeRequests("createWebhook", { ...sandbox })).toBe(webhooks);
    expect(retrySafeRequests("createApiKey", sandbox)).not.toBe(webhooks);
    expect(retrySafeRequests("createWebhook", { ...sandbox, workspaceId: "ws_globex" })).not.toBe(webhooks);
    expect(retrySafeRequests("createWebhook", { ...sandbox, environment: "live" })).not.toBe(webhooks);
  });

  it("keeps a new workspace's key to the workspace and environment it was sent from, as the server scopes keys by the token's", () => {
    // The top bar's New workspace is sent with the token of the workspace and environment shown;
    // one key for the whole page would reach another scope after a switch, where the server has
    // not seen it, and create a second workspace there.
    const sandbox = { workspaceId: "ws_acme", environment: "sandbox" };
    const workspaces = retrySafeRequests("createWorkspace", sandbox);
    expect(retrySafeRequests("createWorkspace", { ...sandbox })).toBe(workspaces);
    expect(retrySafeRequests("createWorkspace", { ...sandbox, workspaceId: "ws_globex" })).not.toBe(workspaces);
    expect(retrySafeRequests("createWorkspace", { ...sandbox, environment: "live" })).not.toBe(workspaces);
    // @ts-expect-error: every form names its scope; none shares one key across workspaces.
    expect(() => retrySafeRequests("createWorkspace", null)).toThrow(TypeError);
  });
});
