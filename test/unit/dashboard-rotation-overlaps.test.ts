import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { API_KEY_OVERLAP_MAX, DEFAULT_OVERLAP, overlapChoices, WEBHOOK_SECRET_OVERLAP_MAX } from "../../dashboard/src/lib/rotation-overlaps.js";

/**
 * The overlap a rotation offers (dashboard/src/components/overlap-fieldset.tsx): how long the old
 * secret keeps working, up to what each operation's contract allows.
 */
interface OverlapSchema {
  maximum: number;
  default: number;
}
const spec = parse(readFileSync(new URL("../../openapi/v1.yaml", import.meta.url), "utf8")) as {
  components: { schemas: Record<string, { properties: { overlap_seconds: OverlapSchema } }> };
};
const overlapOf = (schema: string) => spec.components.schemas[schema]!.properties.overlap_seconds;

describe("overlapChoices", () => {
  it("holds each rotation's limit to its contract", () => {
    expect(API_KEY_OVERLAP_MAX).toBe(overlapOf("RotateApiKeyRequest").maximum);
    expect(WEBHOOK_SECRET_OVERLAP_MAX).toBe(overlapOf("RotateWebhookSecretRequest").maximum);
    expect(DEFAULT_OVERLAP).toBe(overlapOf("RotateApiKeyRequest").default);
    expect(DEFAULT_OVERLAP).toBe(overlapOf("RotateWebhookSecretRequest").default);
  });

  it("offers an API key up to 30 days and a webhook secret up to 7 days, from none", () => {
    expect(overlapChoices(API_KEY_OVERLAP_MAX).map((choice) => choice.label)).toEqual(["None: the old secret stops now", "1 hour", "24 hours", "7 days", "30 days"]);
    expect(overlapChoices(WEBHOOK_SECRET_OVERLAP_MAX).map((choice) => choice.label)).toEqual(["None: the old secret stops now", "1 hour", "24 hours", "7 days"]);
  });

  it("offers nothing the server would refuse, and always the default", () => {
    for (const max of [API_KEY_OVERLAP_MAX, WEBHOOK_SECRET_OVERLAP_MAX]) {
      const choices = overlapChoices(max);
      expect(choices.every((choice) => choice.seconds >= 0 && choice.seconds <= max)).toBe(true);
      expect(choices.map((choice) => choice.seconds)).toContain(DEFAULT_OVERLAP);
      expect(choices.at(-1)?.seconds).toBe(max);
    }
  });
});
