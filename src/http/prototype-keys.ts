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
  return find(document);
}

/**
 * Depth first, in document order, with a stack of its own: JSON.parse takes nesting deeper than
 * the call stack does, and a body within the size limit can be nested that deep.
 */
function find(document: unknown): string | null {
  const stack: Array<{ value: unknown; pointer: string }> = [{ value: document, pointer: "" }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, pointer } = next;
    if (value === null || typeof value !== "object") continue;
    const children: Array<{ value: unknown; pointer: string }> = [];
    for (const [key, child] of Object.entries(value)) {
      const here = `${pointer}/${pointerSegment(key)}`;
      if (key === "__proto__") return here;
      if (key === "constructor" && child !== null && typeof child === "object" && Object.hasOwn(child, "prototype")) return `${here}/prototype`;
      children.push({ value: child, pointer: here });
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return null;
}
