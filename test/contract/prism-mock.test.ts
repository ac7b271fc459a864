import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContractChecker } from "../helpers/contract.js";

/**
 * `make mock` serves the contract with Prism so client teams can build before a server exists.
 * This proves the mock starts from openapi/v1.yaml and answers what the contract promises.
 */
describe("the Prism mock of the contract", () => {
  const checker = new ContractChecker();
  let prism: ChildProcess;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    prism = spawn("node_modules/.bin/prism", ["mock", "openapi/v1.yaml", "-h", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
    for (let i = 0; i < 100; i++) {
      if (await fetch(`${base}/health`).then(() => true, () => false)) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error("Prism did not start");
  });
  afterAll(() => {
    prism?.kill();
  });

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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}
