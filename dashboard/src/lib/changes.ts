/**
 * What a settings form sends: only what its user changed against what it loaded. The update
 * operations keep every field left out, so a save leaves alone a value that someone else (a
 * script, another admin) set after the page loaded, instead of putting back the stale one the
 * form still shows.
 */

type Plain = Record<string, unknown>;

/** Changes to a T: any of its fields, and of a nested object any of its keys. */
export type Changes<T> = { [K in keyof T]?: T[K] extends Plain ? Partial<T[K]> : T[K] };

const isPlainObject = (value: unknown): value is Plain => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Two lists that hold the same items, in any order. The update operations' lists are sets
 * (`uniqueItems`: a webhook endpoint's event types), and a form reads its ticked boxes in its
 * own order, not the order the server answered in.
 */
function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  const held = new Set(b);
  return a.every((item) => held.has(item));
}

/**
 * The fields of `next` that differ from `loaded`; of a nested object (such as the workspace's
 * tracking defaults, whose update also keeps the keys left out), only the keys that differ; a
 * list, when its items differ (see sameItems).
 */
export function changedFields<T extends object>(loaded: T, next: T): Changes<T> {
  const changes: Plain = {};
  for (const [key, value] of Object.entries(next)) {
    const before: unknown = (loaded as Plain)[key];
    if (isPlainObject(value) && isPlainObject(before)) {
      const nested = changedFields(before, value);
      if (Object.keys(nested).length > 0) changes[key] = nested;
    } else if (Array.isArray(value) && Array.isArray(before)) {
      if (!sameItems(value, before)) changes[key] = value;
    } else if (value !== before) {
      changes[key] = value;
    }
  }
  return changes as Changes<T>;
}

/**
 * A text field's value: the loaded one while the field still shows it (spaces around it kept, so
 * an untouched field is not a change), else the typed text trimmed; empty means null.
 */
export function typedText(typed: string, loaded: string | null): string | null {
  if (typed === (loaded ?? "")) return loaded;
  const trimmed = typed.trim();
  return trimmed === "" ? null : trimmed;
}
