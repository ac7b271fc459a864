/**
 * Runs a bounded removal batch after batch until one comes back short, and answers the total.
 * Each batch is a short statement, so accepting and sending go on between them: one statement
 * for a whole backlog would hold SQLite's only writer (or MySQL's locks and undo log) for all of
 * it, and one batch per maintenance round falls behind any install busier than a batch per round.
 */
export async function removeInBatches(remove: (limit: number) => Promise<number>, size: number): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await remove(size);
    total += count;
    if (count < size) return total;
  }
}
