/** A person's display name as stored: surrounding spaces dropped, and nothing left is no name. */
export function displayName(given: string | null | undefined): string | null {
  return given?.trim() || null;
}
