import { expect } from "vitest";
import type { TestApp } from "./test-app.js";
import type { components } from "../../generated/v1.js";

type Template = components["schemas"]["Template"];

/**
 * createTemplate, updateTemplate and publishTemplate as tests call them: each expects success and
 * answers the template. `app` is read at each call, since tests make a fresh app per test.
 */
export function templateCalls(app: () => TestApp) {
  const expectTemplate = async (call: ReturnType<TestApp["call"]>, status: number) => {
    const res = await call;
    expect(res.statusCode, res.body).toBe(status);
    return res.json() as Template;
  };
  return {
    create: (payload: Record<string, unknown>, key?: string) => expectTemplate(app().call({ method: "POST", url: "/v1/templates", payload, ...(key ? { key } : {}) }), 201),
    update: (ref: string, payload: object) => expectTemplate(app().call({ method: "PATCH", url: `/v1/templates/${ref}`, payload }), 200),
    publish: (ref: string, payload?: object) => expectTemplate(app().call({ method: "POST", url: `/v1/templates/${ref}/publish`, ...(payload ? { payload } : {}) }), 200),
  };
}
