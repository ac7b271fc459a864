import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databases } from "../helpers/databases.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";

describe.each(databases)("first message ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  it("accepts a message with a sandbox key and delivers it through the simulator", async () => {
    const created = await t.call({ method: "POST", url: "/v1/messages", payload: aMessage() });
    expect(created.statusCode).toBe(202);
    const id = created.json().id as string;
    expect(created.headers.location).toBe(`/v1/messages/${id}`);
    await t.drain();
    const fetched = await t.call({ method: "GET", url: `/v1/messages/${id}` });
    expect(fetched.json()).toMatchObject({ id, status: "delivered", recipients: [{ email: "ada@example.com", status: "delivered" }] });
    expect(fetched.json().mime).toContain(`Message-ID: <${id}@acme.example>`);
  });
});
