/**
 * The contract operation a route serves: the glue puts its operationId in the route's config.
 * Undefined for routes outside the contract (the dashboard, /auth, tracking links, /docs).
 */
export function operationIdOf(config: unknown): string | undefined {
  return (config as { operationId?: string } | undefined)?.operationId;
}
