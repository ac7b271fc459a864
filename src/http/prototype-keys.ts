import { pointerSegment } from "../domain/json-pointer.js";

/**
 * Where a JSON document holds a key that would reach an object's prototype if the document were
 * ever merged into another object: `__proto__`, or `constructor` holding `prototype` (the keys
 * secure-json-parse, Fastify's JSON parser, refuses). Its JSON Pointer, or null when there is
 * none or the text is not JSON at all.
 */
export function prototypeKeyPointer(json: string): string | null {
  let document: unknown;
  try {
    document = JSON.parse(json);
  } catch {
    return null;
  }
  return find(document, "");
}

function find(value: unknown, pointer: string): string | null {
  if (value === null || typeof value !== "object") return null;
  for (const [key, child] of Object.entries(value)) {
    const here = `${pointer}/${pointerSegment(key)}`;
    if (key === "__proto__") return here;
    if (key === "constructor" && child !== null && typeof child === "object" && Object.hasOwn(child, "prototype")) return `${here}/prototype`;
    const below = find(child, here);
    if (below !== null) return below;
  }
  return null;
}
