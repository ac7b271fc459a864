import { describe, expect, it } from "vitest";
import type { Workspace } from "../src/index.js";
import { contractExample, fakeClient, fakeFetch, json, theRequest } from "./helpers.js";

/** `mr.workspace.update` over a fake fetch: the monthly quota, set and removed. */
const workspace = contractExample<Workspace>("SandboxWorkspace");

describe("workspace.update", () => {
  it("PATCHes monthly_quota to /v1/workspace, without an Idempotency-Key", async () => {
    const fake = fakeFetch([json(200, { ...workspace, monthly_quota: 50_000 })]);
    await expect(fakeClient(fake).workspace.update({ monthly_quota: 50_000 })).resolves.toMatchObject({ monthly_quota: 50_000 });
    expect(theRequest(fake)).toEqual({ method: "PATCH", target: "/v1/workspace", body: { monthly_quota: 50_000 }, idempotencyKey: null });
  });

  it("sends monthly_quota: null to remove the quota", async () => {
    const fake = fakeFetch([json(200, workspace)]);
    await fakeClient(fake).workspace.update({ monthly_quota: null });
    expect(theRequest(fake).body).toEqual({ monthly_quota: null });
  });

  it("sends only the tracking defaults given, under tracking, and resolves to the workspace with all four", async () => {
    const fake = fakeFetch([json(200, { ...workspace, tracking: { opens: true, clicks: false, replies: false, unsubscribe: true } })]);
    const updated = await fakeClient(fake).workspace.update({ tracking: { opens: true, unsubscribe: true } });
    expect(updated.tracking).toEqual({ opens: true, clicks: false, replies: false, unsubscribe: true });
    expect(theRequest(fake)).toEqual({ method: "PATCH", target: "/v1/workspace", body: { tracking: { opens: true, unsubscribe: true } }, idempotencyKey: null });
  });
});
