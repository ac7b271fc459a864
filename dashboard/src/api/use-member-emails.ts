import { useMemo } from "react";
import type { MemberEmails } from "../lib/actors";
import { useApi } from "./api-context";
import { collectPages } from "./collect-pages";
import { useRequest } from "./use-request";

// Enough for any team; past it, the rest are shown by their user ids.
const MEMBERS_CAP = 1000;

/**
 * The workspace's members' addresses, to put on the user ids that the audit log and API keys
 * carry. Empty while loading or when the list failed: the ids show instead.
 */
export function useMemberEmails(): MemberEmails {
  const api = useApi();
  const members = useRequest(
    (signal) => collectPages((after) => api.call((mr) => mr.accounts.listMembers({ limit: 100, ...(after ? { after } : {}) }, { signal })), { cap: MEMBERS_CAP }),
    [api],
  );
  return useMemo<MemberEmails>(() => new Map(members.data?.items.map((member) => [member.user_id, member.email] as const)), [members.data]);
}
