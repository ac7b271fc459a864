import { describe, expect, it } from "vitest";
import { ConflictError, Mailroom, PermissionDeniedError, type Account, type Invitation, type InvitationWithUrl, type Member, type WorkspaceMembership } from "../src/index.js";
import { contractExample, fakeFetch, json, problem, theRequest, type FakeFetch } from "./helpers.js";

/**
 * `mr.accounts` (tag `Accounts`) over a fake fetch: each method's request (method, path, query,
 * body, Idempotency-Key) and how its answer comes back. What the server does with these calls is
 * the server's tests' business; `prism.test.ts` checks the requests against the contract. The
 * answers are the contract's own examples.
 */
const USER_TOKEN = "mru_test_4f8a2c9e1b7d3f6a0c5e8b2d9f1a7c3e5b";
const USER_ID = "usr_01jd3k8m2q5v7w9x1y3z5a7b9c";
const INVITATION_ID = "inv_01jd3k8m2q5v7w9x1y3z5a7b9c";

const member = contractExample<Member>("Member");
const invitation = contractExample<Invitation>("Invitation");
const membership = contractExample<WorkspaceMembership>("NewWorkspace");

/** A client holding a user access token, over `fake`. */
const userClient = (fake: FakeFetch) => new Mailroom({ apiKey: USER_TOKEN, baseUrl: "http://mailroom.test", fetch: fake.fetch, maxRetries: 0 });

describe("a user access token", () => {
  it("is accepted as the client's key and sent as the bearer credential", async () => {
    const fake = fakeFetch([json(200, { user: {}, workspaces: [] })]);
    await userClient(fake).accounts.get();
    expect(fake.requests[0]?.headers.get("authorization")).toBe(`Bearer ${USER_TOKEN}`);
  });

  it.each(["mru_live_abc", "mru_test_abc", "svc_test_abc"])("%s reaches every other resource as well", async (credential) => {
    const fake = fakeFetch([json(200, { id: "ws_1", object: "workspace" })]);
    await new Mailroom(credential, { baseUrl: "http://mailroom.test", fetch: fake.fetch }).workspace.get();
    expect(fake.requests[0]?.headers.get("authorization")).toBe(`Bearer ${credential}`);
  });
});

describe("accounts.get", () => {
  it("GETs /v1/account and resolves to the account", async () => {
    const account = contractExample<Account>("Account");
    const fake = fakeFetch([json(200, account)]);
    await expect(userClient(fake).accounts.get()).resolves.toEqual(account);
    expect(theRequest(fake)).toEqual({ method: "GET", target: "/v1/account", body: undefined, idempotencyKey: null });
  });

  it("throws PermissionDeniedError with code user_token_required when called with an API key", async () => {
    const fake = fakeFetch([problem(403, "user_token_required")]);
    const error = await new Mailroom({ apiKey: "svc_test_key", baseUrl: "http://mailroom.test", fetch: fake.fetch }).accounts.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, code: "user_token_required" });
    expect(fake.requests).toHaveLength(1);
  });
});

describe("accounts.createWorkspace", () => {
  it("POSTs the name to /v1/workspaces with an Idempotency-Key and resolves to the membership", async () => {
    const fake = fakeFetch([json(201, membership)]);
    await expect(userClient(fake).accounts.createWorkspace({ name: "Acme staging" })).resolves.toEqual(membership);
    expect(theRequest(fake)).toEqual({ method: "POST", target: "/v1/workspaces", body: { name: "Acme staging" }, idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  it("sends the caller's own Idempotency-Key", async () => {
    const fake = fakeFetch([json(201, membership)]);
    await userClient(fake).accounts.createWorkspace({ name: "Acme staging" }, { idempotencyKey: "staging-1" });
    expect(theRequest(fake).idempotencyKey).toBe("staging-1");
  });
});

describe("accounts.listMembers", () => {
  it("GETs /v1/members with the query and resolves to a page of members", async () => {
    const fake = fakeFetch([json(200, { data: [member], has_more: false, next_cursor: null })]);
    const page = await userClient(fake).accounts.listMembers({ limit: 10 });
    expect(page.data).toEqual([member]);
    expect(page.hasNextPage()).toBe(false);
    expect(theRequest(fake)).toMatchObject({ method: "GET", target: "/v1/members?limit=10" });
  });

  it("walks every page with for await, sending the cursor as after", async () => {
    const second = { ...member, user_id: "usr_2" };
    const fake = fakeFetch((request) =>
      new URL(request.url).searchParams.get("after") === "cur_2"
        ? json(200, { data: [second], has_more: false, next_cursor: null })
        : json(200, { data: [member], has_more: true, next_cursor: "cur_2" }),
    );
    const ids: string[] = [];
    for await (const each of userClient(fake).accounts.listMembers({ limit: 1 })) ids.push(each.user_id);
    expect(ids).toEqual([USER_ID, "usr_2"]);
    expect(fake.requests.map((request) => request.url.search)).toEqual(["?limit=1", "?limit=1&after=cur_2"]);
  });
});

describe("accounts.updateMember", () => {
  it("PATCHes the role to /v1/members/{user_id}, without an Idempotency-Key", async () => {
    const fake = fakeFetch([json(200, member)]);
    await expect(userClient(fake).accounts.updateMember(USER_ID, { role: "admin" })).resolves.toEqual(member);
    expect(theRequest(fake)).toEqual({ method: "PATCH", target: `/v1/members/${USER_ID}`, body: { role: "admin" }, idempotencyKey: null });
  });

  it("escapes the user id in the path", async () => {
    const fake = fakeFetch([json(200, member)]);
    await userClient(fake).accounts.updateMember("usr/../1", { role: "viewer" });
    expect(theRequest(fake).target).toBe("/v1/members/usr%2F..%2F1");
  });
});

describe("accounts.removeMember", () => {
  it("DELETEs /v1/members/{user_id} and resolves to the member as removed", async () => {
    const fake = fakeFetch([json(200, member)]);
    await expect(userClient(fake).accounts.removeMember(USER_ID)).resolves.toEqual(member);
    expect(theRequest(fake)).toEqual({ method: "DELETE", target: `/v1/members/${USER_ID}`, body: undefined, idempotencyKey: null });
  });
});

describe("accounts.leaveWorkspace", () => {
  it("POSTs to /v1/workspace/leave with an Idempotency-Key and no body, and resolves to the member who left", async () => {
    const fake = fakeFetch([json(200, member)]);
    await expect(userClient(fake).accounts.leaveWorkspace()).resolves.toEqual(member);
    expect(theRequest(fake)).toEqual({ method: "POST", target: "/v1/workspace/leave", body: undefined, idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  it("throws ConflictError for the last owner", async () => {
    const fake = fakeFetch([problem(409, "last_owner")]);
    const refused = userClient(fake).accounts.leaveWorkspace();
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    await expect(refused).rejects.toMatchObject({ status: 409, code: "last_owner" });
  });
});

describe("accounts.createInvitation", () => {
  it("POSTs the address and role to /v1/invitations and resolves to the invitation with its accept_url", async () => {
    const created = contractExample<InvitationWithUrl>("NewInvitation");
    const fake = fakeFetch([json(201, created)]);
    await expect(userClient(fake).accounts.createInvitation({ email: "grace@acme.example", role: "developer" })).resolves.toEqual(created);
    expect(theRequest(fake)).toEqual({
      method: "POST",
      target: "/v1/invitations",
      body: { email: "grace@acme.example", role: "developer" },
      idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });
});

describe("accounts.listInvitations", () => {
  it("GETs /v1/invitations and resolves to a page of invitations", async () => {
    const fake = fakeFetch([json(200, { data: [invitation], has_more: true, next_cursor: "cur_2" })]);
    const page = await userClient(fake).accounts.listInvitations();
    expect(page.data).toEqual([invitation]);
    expect(page.next_cursor).toBe("cur_2");
    expect(theRequest(fake)).toMatchObject({ method: "GET", target: "/v1/invitations" });
  });
});

describe("accounts.revokeInvitation", () => {
  it("DELETEs /v1/invitations/{invitation_id} and resolves to the revoked invitation", async () => {
    const fake = fakeFetch([json(200, invitation)]);
    await expect(userClient(fake).accounts.revokeInvitation(INVITATION_ID)).resolves.toEqual(invitation);
    expect(theRequest(fake)).toEqual({ method: "DELETE", target: `/v1/invitations/${INVITATION_ID}`, body: undefined, idempotencyKey: null });
  });
});
