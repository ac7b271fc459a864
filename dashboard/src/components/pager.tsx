import type { PagedState } from "../api/use-request";

type PagerState = Pick<PagedState<unknown>, "hasPrevious" | "hasNext" | "loading" | "pageNumber" | "next" | "previous">;

/** Previous / Next for a cursor-paginated list. */
export function Pager({ paged, label }: { paged: PagerState; label: string }) {
  if (!paged.hasPrevious && !paged.hasNext) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" className="button" onClick={paged.previous} disabled={!paged.hasPrevious || paged.loading}>
        Previous
      </button>
      <span className="pager__page">Page {paged.pageNumber}</span>
      <button type="button" className="button" onClick={paged.next} disabled={!paged.hasNext}>
        Next
      </button>
    </nav>
  );
}
