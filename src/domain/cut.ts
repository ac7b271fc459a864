/**
 * The first `max` UTF-16 code units of `value`, one fewer rather than half a surrogate pair: what
 * is kept of text a sender or a remote server controls, to fit a bounded column.
 */
export function cut(value: string, max: number): string {
  if (value.length <= max) return value;
  const last = value.charCodeAt(max - 1);
  return value.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
