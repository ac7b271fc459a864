import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedUp } from "../../test/helpers/dashboard-session.js";
import { startTestServer, type TestServer } from "../../test/helpers/http-server.js";
import { ConflictError, Mailroom, PermissionDeniedError } from "../src/index.js";

/**
 * mr.accounts against the real server with a real user access token (the dashboard's session
 * exchange), so the Accounts operations are proven end to end from code, not only in the browser.
 */
describe("mr.accounts against the real server", () => {
  let server: TestServer;
  let mr: Mailroom;
  let workspaceId: string;

  beforeAll(async () => {
    server = await startTestServer();
    const owner = await signedUp(server.testApp, { email: "ada@acme.example", name: "Ada", workspace_name: "Acme" });
    workspaceId = owner.workspaceId;
    mr = new Mailroom({ apiKey: await owner.session.token(workspaceId), baseUrl: server.baseUrl, maxRetries: 0 });
  });
  afterAll(async () => server?.close());

  it("reads the account and creates a workspace", async () => {
    const account = await mr.accounts.get();
    expect(account.user.email).toBe("ada@acme.example");
    expect(account.workspaces).toEqual([expect.objectContaining({ id: workspaceId, role: "owner" })]);
    const staging = await mr.accounts.createWorkspace({ name: "Staging" });
    expect(staging).toMatchObject({ name: "Staging", role: "owner" });
  });

  it("renames the signed-in user, and clears the name with null", async () => {
    expect((await mr.accounts.update({ name: " Ada Lovelace " })).user.name).toBe("Ada Lovelace");
    expect((await mr.accounts.get()).user.name).toBe("Ada Lovelace");
    expect((await mr.accounts.update({ name: null })).user.name).toBeNull();
  });

  it("invites, lists and revokes, with the link shown once", async () => {
    const invitation = await mr.accounts.createInvitation({ email: "grace@acme.example", role: "admin" });
    expect(invitation.accept_url).toMatch(new RegExp(`^${server.baseUrl}/invitations/`));
    const pending = [];
    for await (const item of mr.accounts.listInvitations()) pending.push(item);
    expect(pending.map((item) => item.id)).toContain(invitation.id);
    expect(await mr.accounts.revokeInvitation(invitation.id)).toMatchObject({ id: invitation.id });
  });

  it("lists members and refuses to demote the last owner with a ConflictError", async () => {
    const members = await mr.accounts.listMembers();
    expect(members.data).toEqual([expect.objectContaining({ email: "ada@acme.example", role: "owner" })]);
    const error = await mr.accounts.updateMember(members.data[0]!.user_id, { role: "viewer" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe("last_owner");
  });

  it("refuses an API key with PermissionDeniedError user_token_required", async () => {
    const withKey = new Mailroom({ apiKey: server.sandboxKey, baseUrl: server.baseUrl, maxRetries: 0 });
    const error = await withKey.accounts.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect((error as PermissionDeniedError).code).toBe("user_token_required");
  });
});
