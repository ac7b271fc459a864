import { isDeepStrictEqual } from "node:util";

/**
 * The fields of `given` whose value differs from `current`'s, compared as values (a list or an
 * object given as it is stored is no change). A field left out (undefined) is no change either.
 * An update applies only these, and the audit log names only these (docs/audit-log.md): a form
 * saved whole, one field edited, changes that one field.
 */
export function changedOnly<T extends object>(current: T, given: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(given).filter(([field, value]) => value !== undefined && !isDeepStrictEqual(current[field as keyof T], value))) as Partial<T>;
}

/** The names of the fields `changedOnly` keeps, sorted: what an audit event lists. */
export const changedFieldsOf = <T extends object>(current: T, given: Partial<T>): string[] => Object.keys(changedOnly(current, given)).sort();
