import { useMemo } from "react";
import type { MemberEmails } from "../lib/actors";
import { useAllMembers } from "./use-all-members";

/**
 * The workspace's members' addresses, to put on the user ids that the audit log and API keys
 * carry. Empty while loading or when the list failed, and without the members past the cap: the
 * ids show instead.
 */
export function useMemberEmails(): MemberEmails {
  const members = useAllMembers();
  return useMemo<MemberEmails>(() => new Map(members.data?.items.map((member) => [member.user_id, member.email] as const)), [members.data]);
}
