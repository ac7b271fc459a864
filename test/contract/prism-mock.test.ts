import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContractChecker } from "../helpers/contract.js";
import { startPrism, type PrismMock } from "../helpers/prism.js";

/**
 * `make mock` serves the contract with Prism so client teams can build before a server exists.
 * This proves the mock starts from openapi/v1.yaml and answers what the contract promises.
 */
describe("the Prism mock of the contract", () => {
  const checker = new ContractChecker();
  let prism: PrismMock;
  let base: string;

  beforeAll(async () => {
    prism = await startPrism();
    base = prism.baseUrl;
  });
  afterAll(() => prism?.stop());

  it("accepts a valid message and answers the documented 202", async () => {
    const response = await fetch(`${base}/v1/messages`, {
      method: "POST",
      headers: { authorization: "Bearer svc_test_mock", "content-type": "application/json" },
      body: JSON.stringify({ to: "ada@example.com", subject: "Hi", html: "<p>Hi</p>" }),
    });
    expect(response.status).toBe(202);
    expect(checker.check("POST", "/v1/messages", 202, response.headers.get("content-type") ?? undefined, await response.text())).toEqual([]);
  });

  it("refuses a request that breaks the contract", async () => {
    const response = await fetch(`${base}/v1/messages`, {
      method: "POST",
      headers: { authorization: "Bearer svc_test_mock", "content-type": "application/json" },
      body: JSON.stringify({ subject: "no recipient" }),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
  });

  it("requires the bearer credential the contract declares", async () => {
    const response = await fetch(`${base}/v1/workspace`);
    expect(response.status).toBe(401);
  });
});
