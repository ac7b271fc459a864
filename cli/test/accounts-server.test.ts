import { describe, expect, it } from "vitest";
import type { Account, Member } from "mailroom";
import { signedUp } from "../../test/helpers/dashboard-session.js";
import type { TestServer } from "../../test/helpers/http-server.js";
import { cliEnv, problemOf, runCli, useTestServer } from "./helpers.js";

// `mailroom accounts` against the real server with a real user access token from a dashboard session.
let server: TestServer;
useTestServer((started) => ({ server } = started));

describe("mailroom accounts, with a user access token", () => {
  it("shows the account and the members, and invites with a link", async () => {
    const owner = await signedUp(server.testApp, { email: "ada@acme.example", workspace_name: "Acme" });
    const env = cliEnv(server, await owner.session.token(owner.workspaceId));
    const account = (await runCli(["accounts", "get"], { env })).json<Account>();
    expect(account.workspaces).toEqual([expect.objectContaining({ id: owner.workspaceId, role: "owner" })]);
    const invited = await runCli(["accounts", "create-invitation", "--email", "grace@acme.example", "--role", "admin"], { env });
    expect(invited.code).toBe(0);
    expect(invited.json().accept_url).toMatch(/\/invitations\//);
    const members = (await runCli(["accounts", "list-members"], { env })).json<{ data: Member[] }>();
    expect(members.data.map((member) => member.email)).toEqual(["ada@acme.example"]);
  });

  it("explains that an API key cannot call an account operation", async () => {
    const result = await runCli(["accounts", "get"], { env: cliEnv(server) });
    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ code: "user_token_required" });
  });
});
