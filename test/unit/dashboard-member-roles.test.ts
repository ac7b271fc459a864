import { describe, expect, it } from "vitest";
import { assignableRoles, mayAssignRole, mayRemoveMember, ROLES, ownersAfter, roleChangeToConfirm, soleOwnerId } from "../../dashboard/src/lib/member-roles.js";
import { mayAssign } from "../../src/domain/roles.js";

/**
 * The Settings page's members and invitations (dashboard/src/lib/member-roles.ts): the role
 * selects, Remove, Invite and Revoke are offered only to whom the server allows them, and the
 * changes that cannot be taken back by the one who makes them are asked about first.
 */
describe("mayAssignRole", () => {
  it("allows exactly what the server allows, for every actor, current role and new role", () => {
    for (const actor of ROLES) {
      for (const from of [null, ...ROLES]) {
        for (const to of [null, ...ROLES]) {
          expect(mayAssignRole(actor, from, to), `${actor}: ${from} -> ${to}`).toBe(mayAssign(actor, from, to));
        }
      }
    }
  });
});

describe("assignableRoles", () => {
  it("offers viewers and developers nothing, admins every role but owner, owners every role", () => {
    expect(assignableRoles("viewer", "developer")).toEqual([]);
    expect(assignableRoles("developer", "viewer")).toEqual([]);
    expect(assignableRoles("admin", "developer")).toEqual(["admin", "developer", "viewer"]);
    expect(assignableRoles("admin", null)).toEqual(["admin", "developer", "viewer"]);
    expect(assignableRoles("owner", "developer")).toEqual(["owner", "admin", "developer", "viewer"]);
  });

  it("offers an admin nothing for an owner, whom only owners change", () => {
    expect(assignableRoles("admin", "owner")).toEqual([]);
  });
});

describe("mayRemoveMember", () => {
  it("lets admins remove members below owner and owners anyone, and nobody below admin", () => {
    expect(mayRemoveMember("viewer", "viewer")).toBe(false);
    expect(mayRemoveMember("developer", "viewer")).toBe(false);
    expect(mayRemoveMember("admin", "developer")).toBe(true);
    expect(mayRemoveMember("admin", "owner")).toBe(false);
    expect(mayRemoveMember("owner", "owner")).toBe(true);
  });
});

describe("roleChangeToConfirm", () => {
  it("asks before making someone an owner, who could then demote or remove every other owner", () => {
    expect(roleChangeToConfirm({ from: "admin", to: "owner", self: false })).toBe("grant_owner");
    expect(roleChangeToConfirm({ from: "viewer", to: "owner", self: false })).toBe("grant_owner");
  });

  it("asks before demoting yourself, which only someone else can undo", () => {
    expect(roleChangeToConfirm({ from: "owner", to: "admin", self: true })).toBe("demote_self");
    expect(roleChangeToConfirm({ from: "admin", to: "viewer", self: true })).toBe("demote_self");
  });

  it("changes other roles at once", () => {
    expect(roleChangeToConfirm({ from: "developer", to: "admin", self: false })).toBeNull();
    expect(roleChangeToConfirm({ from: "admin", to: "viewer", self: false })).toBeNull();
    expect(roleChangeToConfirm({ from: "owner", to: "admin", self: false })).toBeNull();
    expect(roleChangeToConfirm({ from: "admin", to: "admin", self: true })).toBeNull();
  });
});

describe("soleOwnerId", () => {
  const member = (user_id: string, role: (typeof ROLES)[number]) => ({ user_id, role });

  it("names the owner of a first page of owners that holds one and has no more", () => {
    expect(soleOwnerId({ data: [member("usr_c", "owner")], has_more: false })).toBe("usr_c");
  });

  it("names nobody when there is another owner, on the page or past it, or none", () => {
    expect(soleOwnerId({ data: [member("usr_a", "owner"), member("usr_c", "owner")], has_more: false })).toBeNull();
    expect(soleOwnerId({ data: [member("usr_a", "owner")], has_more: true })).toBeNull();
    expect(soleOwnerId({ data: [], has_more: false })).toBeNull();
  });
});

describe("ownersAfter", () => {
  const member = (user_id: string, role: (typeof ROLES)[number]) => ({ user_id, role });

  it("adds a member made owner, and takes out an owner given another role", () => {
    expect(ownersAfter({ data: [member("usr_a", "owner")], has_more: false }, member("usr_b", "owner"))).toEqual({ data: [member("usr_a", "owner"), member("usr_b", "owner")], has_more: false });
    expect(ownersAfter({ data: [member("usr_a", "owner"), member("usr_b", "owner")], has_more: false }, member("usr_a", "admin"))).toEqual({ data: [member("usr_b", "owner")], has_more: false });
  });

  it("keeps the page as it was for a change among the other roles", () => {
    const owners = { data: [member("usr_a", "owner")], has_more: true };
    expect(ownersAfter(owners, member("usr_b", "viewer"))).toEqual(owners);
  });
});
