import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDashboardHarness, type DashboardHarness } from "../helpers/dashboard-harness.js";
import { addMembers } from "../helpers/workspace-members.js";

/**
 * Invitations and membership on the Settings page (docs/dashboard.md), in real Chromium against
 * the real server: an admin is offered Revoke only for the invitations an admin may send, as the
 * server refuses an admin's revocation of an invitation to be an owner; any member may leave; the
 * last owner is found among every page of members, not only the one shown.
 */
const OWNER = { email: "ada@acme.example", password: "correct horse battery" };
const ADMIN = { name: "Grace Hopper", email: "grace@acme.example", password: "another fine passphrase" };
const VIEWER = { name: "Dorothy Vaughan", email: "dorothy@acme.example", password: "yet another passphrase" };
const LAST_OWNER_REASON = "A workspace needs at least one owner: make someone else an owner first.";

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

  it("counts the owners of every page: the owner on the first page may leave while another is on the second", async () => {
    // listMembers pages at 100, oldest account first: the owner, the admin and 98 viewers, then
    // one more viewer and the second owner.
    const viewers = Array.from({ length: 99 }, (_, index) => ({ email: `reader${index + 1}@acme.example`, role: "viewer" as const }));
    await addMembers(harness.server.testApp, harness.workspaceId, [...viewers, { email: "joan@acme.example", role: "owner" }]);
    const { page } = harness;
    const row = (email: string) => page.getByTestId("member-row").filter({ hasText: email });
    const leave = () => row(OWNER.email).getByRole("button", { name: "Leave workspace" });
    await page.goto("/settings");
    await row(OWNER.email).waitFor();
    expect(await page.getByTestId("member-row").count()).toBe(100);

    // Not the last owner: Joan, on the next page, is one too.
    await expect.poll(() => leave().isDisabled()).toBe(false);
    expect(await page.getByLabel(`Role for ${OWNER.email}`).isDisabled()).toBe(false);
    expect(await page.getByText(LAST_OWNER_REASON).count()).toBe(0);

    // Nor is Joan, though she is the only owner on her page: her role may change, she may be removed.
    await page.getByRole("navigation", { name: "Members pages" }).getByRole("button", { name: "Next" }).click();
    await row("joan@acme.example").waitFor();
    const joanRole = page.getByLabel("Role for joan@acme.example");
    expect(await joanRole.isDisabled()).toBe(false);
    expect(await row("joan@acme.example").getByRole("button", { name: "Remove joan@acme.example" }).count()).toBe(1);
    expect(await page.getByText(LAST_OWNER_REASON).count()).toBe(0);

    // Once she is an admin, the owner back on the first page is the last one.
    await joanRole.selectOption("admin");
    await expect.poll(() => joanRole.inputValue()).toBe("admin");
    await page.getByRole("navigation", { name: "Members pages" }).getByRole("button", { name: "Previous" }).click();
    await row(OWNER.email).waitFor();
    await expect.poll(() => leave().isDisabled()).toBe(true);
    expect(await page.getByLabel(`Role for ${OWNER.email}`).isDisabled()).toBe(true);
    expect(await page.getByText(LAST_OWNER_REASON).count()).toBe(1);
    expect(harness.opened.errors).toEqual([]);
  });
});
