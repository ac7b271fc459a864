/** One reference token of a JSON Pointer (RFC 6901 §3): `~` and `/` escaped, in that order. */
export const pointerSegment = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1");
