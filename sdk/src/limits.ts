// The contract's limits that a caller splits its work by: the most items one call of each batch
// operation takes (their maxItems in openapi/v1.yaml; sdk/test/limits.test.ts holds them to it).
// Longer lists go in several calls, as the CLI's and the dashboard's imports do.

/** The most messages one `messages.createBatch` call takes. */
export const MESSAGE_BATCH_LIMIT = 100;

/** The most addresses one `suppressions.createBatch` call takes. */
export const SUPPRESSION_BATCH_LIMIT = 1000;
