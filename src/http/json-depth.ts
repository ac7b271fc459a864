import { pointerSegment } from "../domain/json-pointer.js";

/**
 * The JSON Pointer of the first value nested deeper than `maxDepth` (a top-level object or array
 * is depth 1), or null when none is. Iterative, so it cannot itself run out of stack on the
 * bodies it is there to refuse.
 */
export function tooDeepPointer(value: unknown, maxDepth: number): string | null {
  const pending: Array<{ value: unknown; pointer: string; depth: number }> = [{ value, pointer: "", depth: 1 }];
  while (pending.length > 0) {
    const { value: current, pointer, depth } = pending.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth > maxDepth) return pointer;
    const entries: Array<[string, unknown]> = Array.isArray(current) ? current.map((item, i) => [String(i), item]) : Object.entries(current);
    for (const [key, child] of entries) {
      if (child !== null && typeof child === "object") pending.push({ value: child, pointer: `${pointer}/${pointerSegment(key)}`, depth: depth + 1 });
    }
  }
  return null;
}
