import type { Member } from "mailroom";
import { useApi } from "./api-context";
import { collectPages, type Collected } from "./collect-pages";
import { useRequest, type RequestState } from "./use-request";

// Enough for any team; past it, callers say what they cannot tell.
const MEMBERS_CAP = 1000;

/**
 * Every member of the workspace, page after page (listMembers pages at 100), for what needs them
 * all rather than the page shown: their addresses.
 */
export function useAllMembers(): RequestState<Collected<Member>> {
  const api = useApi();
  return useRequest(
    (signal) => collectPages((after) => api.call((mr) => mr.accounts.listMembers({ limit: 100, ...(after ? { after } : {}) }, { signal })), { cap: MEMBERS_CAP }),
    [api],
  );
}
