import type { Role } from "../../src/domain/roles.js";
import { newId } from "../../src/domain/ids.js";
import type { TestApp } from "./test-app.js";

/**
 * Puts users straight into a workspace, for a workspace larger than invitations could fill in a
 * test's time (each sign-up hashes its password at full cost). Their ids come after every user's
 * so far, in the order given, so `listMembers` (oldest account first) lists them last, in that
 * order. They have no password and cannot sign in.
 */
export async function addMembers(testApp: TestApp, workspaceId: string, members: ReadonlyArray<{ email: string; role: Role }>): Promise<void> {
  const { repositories } = testApp.runtime;
  const now = testApp.clock.now();
  await repositories.transaction(async (trx) => {
    for (const [index, { email, role }] of members.entries()) {
      // A millisecond apiece past the test clock's instant, which the users so far were made at
      // (it stands still): an id of that instant could sort before theirs.
      const id = newId("user", now + 1 + index);
      await repositories.users.insert({ id, email, email_normalized: email.toLowerCase(), name: null, password_hash: "", created_at: now, updated_at: now }, trx);
      await repositories.members.insert({ workspace_id: workspaceId, user_id: id, role, created_at: now }, trx);
    }
  });
}
