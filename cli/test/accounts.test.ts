import { describe, expect, it } from "vitest";
import type { Account, Invitation, InvitationWithUrl, Member, WorkspaceMembership } from "mailroom";
import { contractExample, page, problemOf, runCli, stubApi } from "./helpers.js";

/*
 * `mailroom accounts …` against a stand-in for the API: a fetch that records each request and
 * answers with the contract's own examples. These commands need a user access token, which only
 * the dashboard's session hands out; what the server does with them is its own tests' business,
 * and the samples in the contract are checked by test/contract/doors.test.ts.
 */
const USER_TOKEN = "mru_test_4f8a2c9e1b7d3f6a0c5e8b2d9f1a7c3e5b";
const USER_ID = "usr_01jd3k8m2q5v7w9x1y3z5a7b9c";
const INVITATION_ID = "inv_01jd3k8m2q5v7w9x1y3z5a7b9c";
const env = { MAILROOM_API_KEY: USER_TOKEN, MAILROOM_BASE_URL: "http://mailroom.test" };

const account = contractExample<Account>("Account");
const membership = contractExample<WorkspaceMembership>("NewWorkspace");
const member = contractExample<Member>("Member");
const invitation = contractExample<Invitation>("Invitation");
const newInvitation = contractExample<InvitationWithUrl>("NewInvitation");
const ACCEPT_URL = newInvitation.accept_url;

describe("mailroom accounts update", () => {
  it("sends the name, and null for --no-name", async () => {
    for (const [flags, name] of [[["--name", "Ada Lovelace"], "Ada Lovelace"], [["--no-name"], null]] as const) {
      const api = stubApi(200, account);
      const result = await runCli(["accounts", "update", ...flags], { env, fetch: api.fetch });
      expect(result.code, result.stderr).toBe(0);
      expect(result.json<Account>()).toEqual(account);
      expect(api.seen).toEqual([{ method: "PATCH", target: "/v1/account", authorization: `Bearer ${USER_TOKEN}`, idempotencyKey: null, body: { name } }]);
    }
  });

  it("refuses to run without --name or --no-name, and sends nothing", async () => {
    const api = stubApi(200, account);
    const result = await runCli(["accounts", "update"], { env, fetch: api.fetch });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--name");
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom accounts get", () => {
  it("prints the account as the API sent it, calling with the user access token", async () => {
    const api = stubApi(200, account);

    const result = await runCli(["accounts", "get"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Account>()).toEqual(account);
    expect(api.seen).toEqual([{ method: "GET", target: "/v1/account", authorization: `Bearer ${USER_TOKEN}`, idempotencyKey: null, body: undefined }]);
  });

  it("takes the token from --api-key over MAILROOM_API_KEY", async () => {
    const api = stubApi(200, account);

    await runCli(["accounts", "get", "--api-key", "mru_live_given"], { env, fetch: api.fetch });

    expect(api.seen[0]?.authorization).toBe("Bearer mru_live_given");
  });

  it("shows the user as fields and their workspaces as a table on a terminal", async () => {
    const result = await runCli(["accounts", "get"], { env, tty: true, fetch: stubApi(200, account).fetch });

    expect(result.stdout).toMatch(/^email\s+ada@acme\.example$/m);
    expect(result.stdout).toMatch(/^ID\s+NAME\s+ROLE\s+JOINED$/m);
    expect(result.stdout).toMatch(/^ws_01jd3m1n4p6r8s0t2v4w6x8y0z\s+Acme staging\s+developer\s+2026-11-21T10:00:00\.000Z$/m);
  });

  it("exits 1 with the 403 problem, and says what to pass instead, when called with an API key", async () => {
    const problem = { type: "https://mailroom.dev/problems/user_token_required", title: "User access token required", status: 403, code: "user_token_required", detail: "This operation needs a user access token.", request_id: "req_1" };
    const api = stubApi(403, problem);

    const json = await runCli(["accounts", "get"], { env: { ...env, MAILROOM_API_KEY: "svc_test_key" }, fetch: api.fetch });
    const human = await runCli(["accounts", "get", "--no-json"], { env: { ...env, MAILROOM_API_KEY: "svc_test_key" }, fetch: api.fetch });

    expect(json.code).toBe(1);
    expect(json.stdout).toBe("");
    expect(problemOf(json)).toEqual(problem);
    expect(human.stderr).toMatch(/^Error: 403 user_token_required: /);
    expect(human.stderr).toContain("pass a user access token (mru_…)");
    expect(api.seen).toHaveLength(2);
  });
});

describe("mailroom accounts create-workspace", () => {
  it("creates the workspace named --name, with an Idempotency-Key, and prints the membership", async () => {
    const api = stubApi(201, membership);

    const result = await runCli(["accounts", "create-workspace", "--name", "Acme staging"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<WorkspaceMembership>()).toEqual(membership);
    expect(api.seen).toMatchObject([{ method: "POST", target: "/v1/workspaces", body: { name: "Acme staging" }, idempotencyKey: expect.any(String) }]);
  });

  it("sends the --idempotency-key given", async () => {
    const api = stubApi(201, membership);

    await runCli(["accounts", "create-workspace", "--name", "Acme staging", "--idempotency-key", "staging-1"], { env, fetch: api.fetch });

    expect(api.seen[0]?.idempotencyKey).toBe("staging-1");
  });

  it("exits 2 without --name, sending nothing", async () => {
    const api = stubApi(201, membership);

    const result = await runCli(["accounts", "create-workspace"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringContaining("--name") });
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom accounts list-members", () => {
  it("prints one page as the API sent it, passing --limit and --after", async () => {
    const api = stubApi(200, page([member], "cur_2"));

    const result = await runCli(["accounts", "list-members", "--limit", "1", "--after", "cur_1"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(page([member], "cur_2"));
    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/members?limit=1&after=cur_1"]);
  });

  it("prints a table on a terminal, with the way to the next page", async () => {
    const result = await runCli(["accounts", "members"], { env, tty: true, fetch: stubApi(200, page([member], "cur_2")).fetch });

    expect(result.stdout.split("\n")[0]).toMatch(/^USER ID\s+EMAIL\s+NAME\s+ROLE\s+JOINED$/);
    expect(result.stdout).toMatch(new RegExp(`^${USER_ID}\\s+grace@acme\\.example\\s+Grace Hopper\\s+admin\\s+2026-11-21T10:00:00\\.000Z$`, "m"));
    expect(result.stdout).toContain("More: --after cur_2 (or --all)");
  });

  it("passes --role to list the members with one role", async () => {
    const api = stubApi(200, page([member]));

    const result = await runCli(["accounts", "list-members", "--role", "owner"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/members?limit=20&role=owner"]);
  });

  it("refuses a --role that is not one before any request, naming the roles", async () => {
    const api = stubApi(200, page([member]));

    const result = await runCli(["accounts", "list-members", "--role", "superuser"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toContain('Choices: "owner", "admin", "developer", "viewer"');
    expect(api.seen).toEqual([]);
  });

  it("refuses a --limit out of range before any request", async () => {
    const api = stubApi(200, page([member]));

    const result = await runCli(["accounts", "list-members", "--limit", "0"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom accounts update-member", () => {
  it("sends the --role for the member and prints the member", async () => {
    const api = stubApi(200, member);

    const result = await runCli(["accounts", "update-member", USER_ID, "--role", "admin"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Member>()).toEqual(member);
    expect(api.seen).toEqual([{ method: "PATCH", target: `/v1/members/${USER_ID}`, authorization: `Bearer ${USER_TOKEN}`, idempotencyKey: null, body: { role: "admin" } }]);
  });

  it("exits 2 for a role the contract does not have, or none, sending nothing", async () => {
    const api = stubApi(200, member);

    const unknown = await runCli(["accounts", "update-member", USER_ID, "--role", "superuser"], { env, fetch: api.fetch });
    const missing = await runCli(["accounts", "update-member", USER_ID], { env, fetch: api.fetch });

    expect([unknown.code, missing.code]).toEqual([2, 2]);
    expect(problemOf(unknown).message).toMatch(/superuser/);
    expect(problemOf(missing).message).toMatch(/--role/);
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with the API's 409 when the last owner would be demoted", async () => {
    const api = stubApi(409, { type: "https://mailroom.dev/problems/last_owner", title: "Last owner", status: 409, code: "last_owner", detail: "A workspace needs an owner.", request_id: "req_2" });

    const result = await runCli(["accounts", "update-member", USER_ID, "--role", "viewer"], { env, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 409, code: "last_owner" });
  });
});

describe("mailroom accounts remove-member", () => {
  it("removes the member and prints them as they were", async () => {
    const api = stubApi(200, member);

    const result = await runCli(["accounts", "remove-member", USER_ID, "--yes"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Member>()).toEqual(member);
    expect(api.seen).toMatchObject([{ method: "DELETE", target: `/v1/members/${USER_ID}` }]);
  });

  it("says so on a terminal", async () => {
    const result = await runCli(["accounts", "remove-member", USER_ID, "--yes"], { env, tty: true, fetch: stubApi(200, member).fetch });

    expect(result.stdout).toMatch(/^user_id\s+usr_01jd3k8m2q5v7w9x1y3z5a7b9c$/m);
    expect(result.stdout).toMatch(/\n\nRemoved\.\n$/);
  });
});

describe("mailroom accounts leave-workspace", () => {
  it("leaves the token's workspace, with an Idempotency-Key, and prints the member who left", async () => {
    const api = stubApi(200, member);
    const result = await runCli(["accounts", "leave-workspace"], { env, fetch: api.fetch });
    expect([result.code, result.json<Member>(), api.seen]).toMatchObject([0, member, [{ method: "POST", target: "/v1/workspace/leave", idempotencyKey: expect.any(String) }]]);
  });

  it("says so on a terminal", async () => {
    const result = await runCli(["accounts", "leave-workspace"], { env, tty: true, fetch: stubApi(200, member).fetch });

    expect(result.stdout).toMatch(/^user_id\s+usr_01jd3k8m2q5v7w9x1y3z5a7b9c$/m);
    expect(result.stdout).toMatch(/\n\nLeft the workspace\.\n$/);
  });

  it("exits 1 with the API's 409 when the last owner would leave", async () => {
    const api = stubApi(409, { type: "https://mailroom.dev/problems/last_owner", title: "Last owner", status: 409, code: "last_owner", detail: "A workspace needs an owner.", request_id: "req_2" });

    const result = await runCli(["accounts", "leave-workspace"], { env, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 409, code: "last_owner" });
  });
});

describe("mailroom accounts create-invitation", () => {
  it("invites --email with --role and prints the invitation with its accept_url", async () => {
    const api = stubApi(201, newInvitation);

    const result = await runCli(["accounts", "create-invitation", "--email", "grace@acme.example", "--role", "developer"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<InvitationWithUrl>().accept_url).toBe(ACCEPT_URL);
    expect(api.seen).toMatchObject([{ method: "POST", target: "/v1/invitations", body: { email: "grace@acme.example", role: "developer" }, idempotencyKey: expect.any(String) }]);
  });

  it("leaves the role to the API's default without --role", async () => {
    const api = stubApi(201, newInvitation);

    await runCli(["accounts", "invite", "--email", "grace@acme.example"], { env, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({ email: "grace@acme.example" });
  });

  it("shows the link on a line of its own on a terminal and says it is shown only now", async () => {
    const result = await runCli(["accounts", "create-invitation", "--email", "grace@acme.example", "--role", "developer"], { env, tty: true, fetch: stubApi(201, newInvitation).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^accept_url {2}${ACCEPT_URL}$`, "m"));
    expect(result.stdout).not.toContain("shown only now");
    expect(result.stderr).toBe("The link is shown only now: send it to grace@acme.example; it works until 2026-11-28T10:00:00.000Z.\n");
  });

  it("exits 2 without --email or with an unknown --role, sending nothing", async () => {
    const api = stubApi(201, newInvitation);

    const missing = await runCli(["accounts", "create-invitation", "--role", "viewer"], { env, fetch: api.fetch });
    const unknown = await runCli(["accounts", "create-invitation", "--email", "grace@acme.example", "--role", "root"], { env, fetch: api.fetch });

    expect([missing.code, unknown.code]).toEqual([2, 2]);
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom accounts list-invitations", () => {
  it("prints one page as the API sent it", async () => {
    const api = stubApi(200, page([invitation]));

    const result = await runCli(["accounts", "list-invitations"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(page([invitation]));
    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/invitations?limit=20"]);
  });

  it("prints every item of every page with --all", async () => {
    const second = { ...invitation, id: "inv_2" };
    const seen: string[] = [];
    const fetch = async (request: Request) => {
      const after = new URL(request.url).searchParams.get("after");
      seen.push(after ?? "");
      const body = after === "cur_2" ? page([second]) : page([invitation], "cur_2");
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    };

    const result = await runCli(["accounts", "list-invitations", "--all"], { env, fetch });

    expect(result.json<{ data: Invitation[] }>().data.map((each) => each.id)).toEqual([INVITATION_ID, "inv_2"]);
    expect(seen).toEqual(["", "cur_2"]);
  });

  it("prints a table on a terminal, without links", async () => {
    const result = await runCli(["accounts", "invitations"], { env, tty: true, fetch: stubApi(200, page([invitation])).fetch });

    expect(result.stdout.split("\n")[0]).toMatch(/^ID\s+EMAIL\s+ROLE\s+INVITED BY\s+EXPIRES$/);
    expect(result.stdout).toMatch(new RegExp(`^${INVITATION_ID}\\s+grace@acme\\.example\\s+developer\\s+${USER_ID}\\s+2026-11-28T10:00:00\\.000Z$`, "m"));
    expect(result.stdout).not.toContain("accept_url");
  });
});

describe("mailroom accounts revoke-invitation", () => {
  it("revokes the invitation and prints it", async () => {
    const api = stubApi(200, invitation);

    const result = await runCli(["accounts", "revoke-invitation", INVITATION_ID, "--yes"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Invitation>()).toEqual(invitation);
    expect(api.seen).toMatchObject([{ method: "DELETE", target: `/v1/invitations/${INVITATION_ID}` }]);
  });

  it("says so on a terminal", async () => {
    const result = await runCli(["accounts", "revoke-invitation", INVITATION_ID, "--yes"], { env, tty: true, fetch: stubApi(200, invitation).fetch });

    expect(result.stdout).toMatch(/^id\s+inv_01jd3k8m2q5v7w9x1y3z5a7b9c$/m);
    expect(result.stdout).toMatch(/\n\nRevoked\.\n$/);
  });

  it("exits 1 with the API's 404 for an invitation it does not know", async () => {
    const api = stubApi(404, { type: "https://mailroom.dev/problems/not_found", title: "Not found", status: 404, code: "not_found", detail: "No such invitation.", request_id: "req_3" });

    const result = await runCli(["accounts", "revoke-invitation", "inv_nope", "--yes"], { env, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 404 });
  });
});
