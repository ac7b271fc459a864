/** Product limits, in one place. The contract states the same numbers to clients. */
export const LIMITS = {
  recipientsPerMessage: 50,
  scheduleHorizonMs: 30 * 24 * 3600 * 1000,
  /** A scheduled_at this far in the past is still accepted as "now" (clock skew). */
  scheduleSkewMs: 60 * 1000,
  pageSizeDefault: 20,
  pageSizeMax: 100,
} as const;
