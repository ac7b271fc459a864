import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";

/**
 * Invitations and membership on the Settings page (docs/dashboard.md), in real Chromium against
 * the real server: an admin is offered Revoke only for the invitations an admin may send, as the
 * server refuses an admin's revocation of an invitation to be an owner; any member may leave.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const ADMIN = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const VIEWER = { name: "Dorothy Vaughan", email: "dorothy@acme.example", password: "yet another passphrase" };

describe("invitations and members in the dashboard", () => {
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

  it("lets a viewer leave the workspace from their own row, after asking, to the No workspace page", async () => {
    const viewer = await harness.openAsInvitedMember(VIEWER, "viewer");
    try {
      await viewer.page.goto("/settings");
      const own = viewer.page.getByTestId("member-row").filter({ hasText: VIEWER.email });
      await own.getByRole("button", { name: "Leave workspace" }).click();
      await viewer.page.getByRole("dialog", { name: "Leave workspace?" }).getByRole("button", { name: "Leave workspace" }).click();
      await viewer.page.getByRole("heading", { level: 1, name: "No workspace" }).waitFor();
      const members = (await (await harness.sdk("sandbox")).accounts.listMembers()).data.map((member) => member.email);
      expect(members).not.toContain(VIEWER.email);
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.context.close();
    }
  });
});
