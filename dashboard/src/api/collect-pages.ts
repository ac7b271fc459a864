import type { PageBody } from "mailroom";

export interface Collected<Item> {
  items: Item[];
  /** More items existed past the cap and were not fetched. */
  capped: boolean;
}

/**
 * Walks a list page by page up to `cap` items, reporting the count as it goes, for views that
 * need the whole list (a chart, a timeline). The cap keeps a busy workspace from turning one
 * page view into thousands of requests; callers say when it was reached.
 */
export async function collectPages<Item>(
  fetchPage: (after: string | undefined) => Promise<PageBody<Item>>,
  { cap, onProgress }: { cap: number; onProgress?: (count: number) => void },
): Promise<Collected<Item>> {
  const items: Item[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await fetchPage(after);
    items.push(...page.data);
    onProgress?.(Math.min(items.length, cap));
    const next = page.has_more ? page.next_cursor : null;
    if (next === null) return { items, capped: false };
    if (items.length >= cap) return { items: items.slice(0, cap), capped: true };
    after = next;
  }
}
