import type { Argv } from "yargs";
import type { PagePromise } from "mailroom";
import type { Args, Context } from "./command.js";
import { definedOnly, optionalString, wholeNumber, wholeNumberDefault } from "./command.js";
import { table } from "./output.js";
import { parsePastInstant } from "./time.js";

/** The pagination and date-range flags every list command has. */
export function listFlags(yargs: Argv, { createdRange = true } = {}): Argv {
  const withPaging = yargs
    .option("limit", { ...wholeNumberDefault(20), describe: "Page size (1-100)", coerce: pageSize })
    .option("after", { type: "string", describe: "Cursor: the next_cursor of the previous page" })
    .option("all", { type: "boolean", describe: "Fetch every page, not just the first", default: false });
  if (!createdRange) return withPaging;
  return withPaging
    .option("created-after", { type: "string", describe: "Only items created at or after (RFC 3339 or a duration ago: 1h, 2d)" })
    .option("created-before", { type: "string", describe: "Only items created before (RFC 3339 or a duration ago)" });
}

/** Checked here, so that a bad --limit is a usage error (exit 2) rather than a round trip. */
function pageSize(value: string): number {
  return wholeNumber(value, "--limit", { min: 1, max: 100 });
}

/** The API's query parameters for those flags. */
export function listQuery(args: Args, { createdRange = true } = {}) {
  const createdAfter = optionalString(args, "created-after");
  const createdBefore = optionalString(args, "created-before");
  return definedOnly({
    limit: args.limit as number | undefined,
    after: optionalString(args, "after"),
    ...(createdRange
      ? {
          created_after: createdAfter && parsePastInstant(createdAfter, "created-after"),
          created_before: createdBefore && parsePastInstant(createdBefore, "created-before"),
        }
      : {}),
  });
}

/**
 * Prints one page (JSON: the page object as the API sent it) or, with --all, every item of every
 * page (JSON: `{ data: [...] }`), reporting progress on a terminal while it fetches.
 */
export async function printList<Item>(
  context: Context,
  args: Args,
  list: PagePromise<Item>,
  columns: { headers: string[]; row: (item: Item) => string[] },
): Promise<void> {
  const { output } = context;
  const render = (items: Item[]) => table(columns.headers, items.map(columns.row));
  if (!args.all) {
    const page = await list;
    output.result({ data: page.data, has_more: page.has_more, next_cursor: page.next_cursor }, () =>
      page.hasNextPage() ? `${render(page.data)}\n\nMore: --after ${page.next_cursor} (or --all)` : render(page.data),
    );
    return;
  }
  const items: Item[] = [];
  for await (const item of list) {
    items.push(item);
    if (items.length % 100 === 0) output.progress(`fetched ${items.length}…`);
  }
  output.result({ data: items }, () => render(items));
}
