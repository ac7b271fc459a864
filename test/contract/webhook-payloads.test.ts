import { describe, expect, it } from "vitest";
import { WEBHOOK_EVENT_TYPES } from "../../src/domain/events.js";
import { sampleEvent } from "../../src/domain/sample-events.js";
import { loadSpec } from "../../src/http/spec.js";
import { ContractChecker, eventDataSchemaName, jsonPointer } from "../helpers/contract.js";

interface DataSchema {
  required?: string[];
  properties?: Record<string, unknown>;
}

/**
 * Every event type a webhook endpoint can subscribe to is a payload of the contract's
 * `webhooks:`, and the sample testWebhook sends for it is that payload: what a receiver built
 * against a sample will also accept the real thing.
 */
describe("webhook payloads", () => {
  const checker = new ContractChecker();

  it("has one entry under webhooks: for every event type, and none other", () => {
    expect(Object.keys((loadSpec() as unknown as { webhooks: Record<string, unknown> }).webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });

  it.each(WEBHOOK_EVENT_TYPES.map((type) => [type]))("sends a %s sample that is the contract's payload for that type", (type) => {
    const body = JSON.stringify(sampleEvent(type, "sandbox", "evt_01jd3k8m2q5v7w9x1y3z5a7b9c", "2026-11-22T10:00:00.000Z"));
    expect(checker.checkWebhook(type, body)).toEqual([]);
    expect(JSON.parse(body)).toMatchObject({ type, data: { test: true } });
  });

  // The payload schemas keep `additionalProperties: true` (a field added later is additive within
  // v1), so validation alone lets a field the contract never mentions through: these checks do not.
  it.each(WEBHOOK_EVENT_TYPES.map((type) => [type]))("types the %s payload's data with its own EventData schema, which declares every field its sample carries", (type) => {
    const spec = loadSpec() as unknown;
    const name = eventDataSchemaName(type);
    const payload = jsonPointer(spec, `/webhooks/${type}/post/requestBody/content/application~1json/schema/allOf/1/properties/data`);
    expect(payload, "the payload's data refers to its EventData schema").toEqual({ $ref: `#/components/schemas/${name}` });
    const schema = jsonPointer(spec, `/components/schemas/${name}`) as DataSchema;
    const data = sampleEvent(type, "sandbox", "evt_01jd3k8m2q5v7w9x1y3z5a7b9c", "2026-11-22T10:00:00.000Z").data as Record<string, unknown>;
    const declared = Object.keys(schema.properties ?? {});
    expect(Object.keys(data).filter((key) => !declared.includes(key)), "fields the sample sends that the contract does not declare").toEqual([]);
    expect((schema.required ?? []).filter((key) => !(key in data)), "required fields the sample lacks").toEqual([]);
  });

  it("tells a payload of another type apart", () => {
    const body = JSON.stringify(sampleEvent("domain.failed", "live", "evt_01jd3k8m2q5v7w9x1y3z5a7b9c", "2026-11-22T10:00:00.000Z"));
    expect(checker.checkWebhook("domain.verified", body)).not.toEqual([]);
    expect(checker.checkWebhook("message.delivered", body)).not.toEqual([]);
  });
});
