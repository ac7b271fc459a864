import { pointerSegment } from "../domain/json-pointer.js";

export interface UnreadableValue {
  pointer: string;
  message: string;
}

/**
 * The first value of a parsed body that cannot be taken as sent, with its JSON Pointer, or null:
 * one nested deeper than `maxDepth` (a top-level object or array is depth 1), or a number that
 * JSON.parse may not have kept exactly. RFC 8259 §6: a number past the largest double becomes
 * Infinity (and would be stored and rendered as "Infinity"), and an integer past 2^53 - 1 may
 * have been rounded (an order number would change; the parsed value cannot tell); or a string or
 * key with a lone surrogate (LONE_SURROGATE). Iterative, so
 * it cannot itself run out of stack on the bodies it is there to refuse.
 */
export function unreadableValue(value: unknown, maxDepth: number): UnreadableValue | null {
  const topLevel = typeof value === "number" ? inexactNumber(value) : null;
  if (topLevel !== null) return { pointer: "", message: topLevel };
  const pending: Array<{ value: unknown; pointer: string; depth: number }> = [{ value, pointer: "", depth: 1 }];
  while (pending.length > 0) {
    const { value: current, pointer, depth } = pending.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth > maxDepth) return { pointer, message: `is nested more than ${maxDepth} levels deep` };
    const entries: Array<[string, unknown]> = Array.isArray(current) ? current.map((item, i) => [String(i), item]) : Object.entries(current);
    for (const [key, child] of entries) {
      if (LONE_SURROGATE.test(key)) return { pointer, message: `has a key with a ${LONE_SURROGATE_PROBLEM}` };
      // Every request body passes here: a number or string is checked in place, and only a bad one gets a pointer.
      const problem = typeof child === "number" ? inexactNumber(child) : typeof child === "string" && LONE_SURROGATE.test(child) ? `holds a ${LONE_SURROGATE_PROBLEM}` : null;
      if (problem !== null) return { pointer: `${pointer}/${pointerSegment(key)}`, message: problem };
      if (child !== null && typeof child === "object") pending.push({ value: child, pointer: `${pointer}/${pointerSegment(key)}`, depth: depth + 1 });
    }
  }
  return null;
}

/**
 * A JSON string may escape half of a UTF-16 pair alone ("\ud800"): no character, so UTF-8 (what
 * is stored, sent and answered) cannot hold it. It would be stored as U+FFFD, or refused by
 * MySQL, and the message read back would not be the one accepted. (With the u flag a pair is one
 * code point, so only a lone half matches.)
 */
const LONE_SURROGATE = /\p{Surrogate}/u;
const LONE_SURROGATE_PROBLEM = "lone UTF-16 surrogate (half of a pair, such as \\ud800 alone), which is no character and cannot be stored";

function inexactNumber(value: number): string | null {
  if (!Number.isFinite(value)) return "is a number too large for any JSON reader to keep; send it as a string";
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) return "is an integer past 2^53 - 1, which JSON readers may not keep exactly; send it as a string";
  return null;
}
