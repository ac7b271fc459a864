/**
 * Gathers the keys asked for during one turn of the event loop and loads them with one call, as
 * DataLoader does: callers ask one key at a time, when each is ready, and the database still sees
 * one query per turn rather than one per key (each key once, however many asked for it). A key
 * the load does not return resolves undefined. Nothing is kept between turns: it batches, it
 * does not cache, so the query runs after every lookup it answers was asked, and none of them
 * sees older data than a query of its own would have.
 */
export function batchLoader<K, V>(loadMany: (keys: K[]) => Promise<Map<K, V>>): (key: K) => Promise<V | undefined> {
  let asked: Array<{ key: K; resolve(value: V | undefined): void; reject(error: unknown): void }> = [];
  const flush = () => {
    const batch = asked;
    asked = [];
    loadMany([...new Set(batch.map((a) => a.key))]).then(
      (found) => batch.forEach((a) => a.resolve(found.get(a.key))),
      (error: unknown) => batch.forEach((a) => a.reject(error)),
    );
  };
  return (key) =>
    new Promise((resolve, reject) => {
      // setImmediate, not a microtask: callers often become ready one after another in a chain of
      // microtasks (each after an await of its own), and the batch should hold all of them.
      if (asked.push({ key, resolve, reject }) === 1) setImmediate(flush);
    });
}
