import type { RequestLog } from "mailroom";
import { describe, expect, it } from "vitest";
import {
  FILTER_NAMES,
  METHODS,
  STATUS_CLASS_OPTIONS,
  credentialOptions,
  describeCredential,
  fieldErrors,
  formatDuration,
  isRequestLogPath,
  requestLogHref,
  statusBadgeClass,
  statusClassOf,
  statusQuery,
  toRequestLogQuery,
} from "../../dashboard/src/lib/request-log.js";

/**
 * The request log pages' helpers (dashboard/src/lib/request-log.ts): the filters in the query
 * string as listRequestLogs' query, the status badges, durations and credentials. The pages
 * themselves are checked in the browser (test/e2e/request-log.test.ts).
 */
const query = (search: string) => toRequestLogQuery(new URLSearchParams(search));

describe("statusQuery", () => {
  it("sends a class picked, or an exact code typed in, which wins", () => {
    expect(statusQuery("4xx", null)).toBe("4xx");
    expect(statusQuery(null, "422")).toBe("422");
    expect(statusQuery("2xx", " 422 ")).toBe("422");
    expect(statusQuery("", "")).toBeUndefined();
    expect(statusQuery(null, null)).toBeUndefined();
  });

  it("takes an exact code in `status` too, as the API names it", () => {
    expect(statusQuery("503", null)).toBe("503");
  });

  it("leaves out what the API would refuse", () => {
    expect(statusQuery("6xx", "42")).toBeUndefined();
    expect(statusQuery("4XX", "abc")).toBeUndefined();
    expect(statusQuery("client", "4225")).toBeUndefined();
    // A bad code falls back to the class.
    expect(statusQuery("5xx", "5")).toBe("5xx");
  });
});

describe("toRequestLogQuery", () => {
  it("reads every filter from the query string", () => {
    expect(query("status=4xx&method=POST&operation=createMessage&credential_id=key_1")).toEqual({
      status: "4xx",
      method: "POST",
      operation: "createMessage",
      credential_id: "key_1",
    });
    expect(query("code=422&credential_id=usr_1")).toEqual({ status: "422", credential_id: "usr_1" });
    expect(query("")).toEqual({});
  });

  it("ignores values the API would refuse rather than show an error for a hand-edited address", () => {
    expect(query("method=OPTIONS&operation=create-message&status=abc")).toEqual({});
    expect(query(`operation=${"a".repeat(101)}&credential_id=${"k".repeat(101)}`)).toEqual({});
    expect(query("method=get")).toEqual({});
  });

  it("names its filters as the page's form does", () => {
    expect(FILTER_NAMES).toEqual(["status", "code", "method", "operation", "credential_id"]);
    expect(STATUS_CLASS_OPTIONS.map((option) => option.value)).toEqual(["2xx", "4xx", "5xx"]);
    expect(METHODS).toEqual(["GET", "POST", "PATCH", "PUT", "DELETE"]);
  });
});

describe("status badges", () => {
  it("are coloured by the status's class", () => {
    expect(statusClassOf(200)).toBe("2xx");
    expect(statusClassOf(202)).toBe("2xx");
    expect(statusClassOf(304)).toBe("3xx");
    expect(statusClassOf(422)).toBe("4xx");
    expect(statusClassOf(503)).toBe("5xx");
    expect(statusBadgeClass(429)).toBe("badge badge--http badge--http-4xx");
    expect(statusBadgeClass(500)).toBe("badge badge--http badge--http-5xx");
  });
});

describe("formatDuration", () => {
  it("says milliseconds, to a tenth below 10, and seconds past one", () => {
    expect(formatDuration(3.24)).toMatch(/^3[.,]2 ms$/);
    expect(formatDuration(0)).toBe("0 ms");
    expect(formatDuration(48.6)).toBe("49 ms");
    expect(formatDuration(1250)).toMatch(/^1[.,]25 s$/);
  });
});

describe("credentials", () => {
  const names = new Map([["key_1", "Deploy bot"]]);

  it("names a key by its name when known, else by its id, linked to the API keys page", () => {
    expect(describeCredential({ type: "api_key", id: "key_1" }, names)).toEqual({
      kind: "API key",
      label: "Deploy bot",
      isId: false,
      id: "key_1",
      href: "/developers/api-keys",
    });
    expect(describeCredential({ type: "api_key", id: "key_2" }, names)).toMatchObject({ label: "key_2", isId: true, href: "/developers/api-keys" });
  });

  it("calls a member a member, keeping their user id", () => {
    expect(describeCredential({ type: "user", id: "usr_1" }, names)).toEqual({ kind: "Member", label: "member", isId: false, id: "usr_1", href: null });
  });

  it("offers the keys by name, and an id in the address that is no key as itself", () => {
    const keys = [
      { id: "key_1", name: "Deploy bot", revoked_at: null },
      { id: "key_2", name: "Old bot", revoked_at: "2026-01-01T00:00:00.000Z" },
    ];
    expect(credentialOptions(keys, null)).toEqual([
      { value: "key_1", label: "Deploy bot" },
      { value: "key_2", label: "Old bot (revoked)" },
    ]);
    expect(credentialOptions(keys, "key_1")).toHaveLength(2);
    expect(credentialOptions(keys, "usr_1").at(-1)).toEqual({ value: "usr_1", label: "Member usr_1" });
    expect(credentialOptions([], "key_9")).toEqual([{ value: "key_9", label: "key_9" }]);
  });
});

describe("fieldErrors", () => {
  const problem = (errors: Array<{ location: "body" | "query"; pointer: string; message: string }>): RequestLog["error"] => ({
    type: "https://mailroom.dev/problems/validation_failed",
    title: "Validation failed",
    status: 422,
    code: "validation_failed",
    request_id: "req_1",
    errors,
  });

  it("lists each field error as pointer and message, the location when the pointer is the whole part", () => {
    expect(fieldErrors(problem([{ location: "body", pointer: "/to", message: "must be an email address" }]))).toEqual([{ at: "/to", message: "must be an email address" }]);
    expect(fieldErrors(problem([{ location: "query", pointer: "", message: "must not have extra properties" }]))).toEqual([
      { at: "query", message: "must not have extra properties" },
    ]);
  });

  it("has none for a success or a problem without them", () => {
    expect(fieldErrors(null)).toEqual([]);
    expect(fieldErrors(problem([]))).toEqual([]);
  });
});

describe("links to the log", () => {
  it("lead to a request's page by its id, and know the log's own pages", () => {
    expect(requestLogHref("req_01abc")).toBe("/developers/request-log/req_01abc");
    expect(isRequestLogPath("/developers/request-log")).toBe(true);
    expect(isRequestLogPath("/developers/request-log/req_1")).toBe(true);
    expect(isRequestLogPath("/developers/request-logs")).toBe(false);
    expect(isRequestLogPath("/developers/api-keys")).toBe(false);
  });
});
