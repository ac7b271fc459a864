import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * Pending invitations on the Settings page (docs/dashboard.md), in real Chromium against the real
 * server: an admin is offered Revoke only for the invitations an admin may send, as the server
 * refuses an admin's revocation of an invitation to be an owner.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const ADMIN = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };

describe("invitations in the dashboard", () => {
  let harness: DashboardHarness;

  beforeAll(async () => {
    harness = await startDashboardHarness({ owner: OWNER });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("offers an admin Revoke for an invitation to be a developer, and none for one to be an owner", async () => {
    const sdk = await harness.sdk("sandbox");
    await sdk.accounts.createInvitation({ email: "alan@acme.example", role: "owner" });
    await sdk.accounts.createInvitation({ email: "katherine@acme.example", role: "developer" });
    const admin = await harness.openAsInvitedMember(ADMIN, "admin");
    try {
      await admin.page.goto("/settings");
      const row = (email: string) => admin.page.getByTestId("invitation-row").filter({ hasText: email });
      await row("katherine@acme.example").waitFor();
      expect(await row("alan@acme.example").textContent()).toContain("owner");
      expect(await row("alan@acme.example").getByRole("button", { name: /^Revoke/ }).count()).toBe(0);
      await row("katherine@acme.example").getByRole("button", { name: "Revoke invitation for katherine@acme.example" }).click();
      await admin.page.getByRole("dialog", { name: "Revoke invitation?" }).getByRole("button", { name: "Revoke invitation" }).click();
      await expect.poll(() => row("katherine@acme.example").count()).toBe(0);
      expect((await sdk.accounts.listInvitations()).data.map((invitation) => invitation.email)).toEqual(["alan@acme.example"]);
      expect(admin.errors).toEqual([]);
    } finally {
      await admin.context.close();
    }
  });
});
