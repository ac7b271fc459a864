import { navigate } from "wouter/use-browser-location";

/** The query parameter of a paged list's page: the cursors it went past, one each, in order. */
export const PAGE_PARAM = "page";

/**
 * Drops the page trail from the address, in place of the current history entry. A cursor is a
 * record of one workspace and environment: in another it would be a silent cut-off in time (the
 * list resumes after an id the new scope does not hold), so a switch of either starts the list
 * on its first page, with its filters kept. Reads the address as it is now (after a switch that
 * went to a list), not as a render saw it.
 */
export function forgetPageTrail(): void {
  const params = new URLSearchParams(window.location.search);
  if (!params.has(PAGE_PARAM)) return;
  params.delete(PAGE_PARAM);
  const search = params.toString();
  navigate(`${window.location.pathname}${search === "" ? "" : `?${search}`}${window.location.hash}`, { replace: true });
}
