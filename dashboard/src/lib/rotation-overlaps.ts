// How long a rotated secret's predecessor keeps working, so deployments can switch over: offered
// when an API key or a webhook endpoint's signing secret is rotated. The two operations differ:
// an API key's old secret may overlap up to 30 days (RotateApiKeyRequest), a webhook secret's
// up to 7 days (RotateWebhookSecretRequest: every delivery meanwhile carries two signatures).
// test/unit/dashboard-rotation-overlaps.test.ts holds these numbers to the contract.

/** RotateApiKeyRequest.overlap_seconds' maximum. */
export const API_KEY_OVERLAP_MAX = 2_592_000;
/** RotateWebhookSecretRequest.overlap_seconds' maximum. */
export const WEBHOOK_SECRET_OVERLAP_MAX = 604_800;
/** Both contracts' default, chosen at first. */
export const DEFAULT_OVERLAP = 86_400;

const OVERLAPS = [
  { seconds: 0, label: "None: the old secret stops now" },
  { seconds: 3600, label: "1 hour" },
  { seconds: 86_400, label: "24 hours" },
  { seconds: 604_800, label: "7 days" },
  { seconds: 2_592_000, label: "30 days" },
] as const;

export interface OverlapChoice {
  seconds: number;
  label: string;
}

/** The overlaps a rotation whose contract allows at most `maxSeconds` offers, shortest first. */
export function overlapChoices(maxSeconds: number): OverlapChoice[] {
  return OVERLAPS.filter((overlap) => overlap.seconds <= maxSeconds);
}
