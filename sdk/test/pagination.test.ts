import { describe, expect, it } from "vitest";
import { Page, UnprocessableEntityError, type Mailroom } from "../src/index.js";
import { fakeClient, fakeFetch, json, problem } from "./helpers.js";

/** Five messages served two to a page, the way the API pages: `after` is the previous `next_cursor`. */
const PAGES: Record<string, { data: Array<{ id: string }>; has_more: boolean; next_cursor: string | null }> = {
  "": { data: [{ id: "msg_5" }, { id: "msg_4" }], has_more: true, next_cursor: "cur_2" },
  cur_2: { data: [{ id: "msg_3" }, { id: "msg_2" }], has_more: true, next_cursor: "cur_3" },
  cur_3: { data: [{ id: "msg_1" }], has_more: false, next_cursor: null },
};

function threePages() {
  return fakeFetch((request) => {
    const page = PAGES[new URL(request.url).searchParams.get("after") ?? ""];
    return page ? json(200, page) : problem(422, "validation_failed");
  });
}

const afters = (fake: ReturnType<typeof threePages>) => fake.requests.map((request) => request.url.searchParams.get("after"));

describe("awaiting a list", () => {
  it("gives the first page, with one request", async () => {
    const fake = threePages();
    const page = await fakeClient(fake).messages.list({ limit: 2 });
    expect(page).toBeInstanceOf(Page);
    expect(page.data.map((message) => message.id)).toEqual(["msg_5", "msg_4"]);
    expect({ has_more: page.has_more, next_cursor: page.next_cursor }).toEqual({ has_more: true, next_cursor: "cur_2" });
    expect(afters(fake)).toEqual([null]);
  });

  it("rejects with the typed error when the first page fails", async () => {
    const fake = fakeFetch([problem(422, "validation_failed")]);
    await expect(fakeClient(fake).messages.list()).rejects.toBeInstanceOf(UnprocessableEntityError);
  });
});

describe("a list call as a Promise", () => {
  it("is a Promise: instanceof, finally, Promise.all", async () => {
    const fake = threePages();
    const call = fakeClient(fake).messages.list({ limit: 2 });
    expect(call).toBeInstanceOf(Promise);
    let settled = false;
    const page = await call.finally(() => {
      settled = true;
    });
    expect(settled).toBe(true);
    expect(page.data.map((message) => message.id)).toEqual(["msg_5", "msg_4"]);
    const [again] = await Promise.all([call]);
    expect(again.next_cursor).toBe("cur_2");
    expect(afters(fake), "one request however often it is read").toEqual([null]);
  });

  it("gives the first page with the response it came in", async () => {
    const fake = fakeFetch([json(200, PAGES[""], { "request-id": "req_page1" })]);
    const { data, response } = await fakeClient(fake).messages.list({ limit: 2 }).withResponse();
    expect(data).toBeInstanceOf(Page);
    expect(data.data).toHaveLength(2);
    expect(response.headers.get("request-id")).toBe("req_page1");
  });
});

describe("for await over a list", () => {
  it("yields every item of every page, in order", async () => {
    const fake = threePages();
    const ids: string[] = [];
    for await (const message of fakeClient(fake).messages.list({ limit: 2 })) ids.push(message.id);
    expect(ids).toEqual(["msg_5", "msg_4", "msg_3", "msg_2", "msg_1"]);
    expect(afters(fake)).toEqual([null, "cur_2", "cur_3"]);
  });

  it("fetches a page only when its first item is needed", async () => {
    const fake = threePages();
    const ids: string[] = [];
    for await (const message of fakeClient(fake).messages.list({ limit: 2 })) {
      ids.push(message.id);
      if (ids.length === 3) break;
    }
    expect(afters(fake)).toEqual([null, "cur_2"]);
  });

  it("sends the filters with every page", async () => {
    const fake = threePages();
    for await (const _message of fakeClient(fake).messages.list({ limit: 2, status: "delivered", tag: "receipt" })) {
      // walking the pages is the point
    }
    for (const request of fake.requests) {
      expect(Object.fromEntries(request.url.searchParams)).toMatchObject({ limit: "2", status: "delivered", tag: "receipt" });
    }
    expect(fake.requests).toHaveLength(3);
  });

  it("starts after the caller's own cursor", async () => {
    const fake = threePages();
    const ids: string[] = [];
    for await (const message of fakeClient(fake).messages.list({ after: "cur_3" })) ids.push(message.id);
    expect(ids).toEqual(["msg_1"]);
  });

  it("throws the typed error of a failing later page after yielding the earlier items", async () => {
    const fake = fakeFetch([json(200, PAGES[""]), problem(422, "validation_failed")]);
    const ids: string[] = [];
    const walk = async () => {
      for await (const message of fakeClient(fake).messages.list()) ids.push(message.id);
    };
    await expect(walk()).rejects.toBeInstanceOf(UnprocessableEntityError);
    expect(ids).toEqual(["msg_5", "msg_4"]);
  });
});

describe("a Page", () => {
  it("fetches the next page with its cursor", async () => {
    const fake = threePages();
    const first = await fakeClient(fake).messages.list({ limit: 2 });
    const second = await first.nextPage();
    expect(second.data.map((message) => message.id)).toEqual(["msg_3", "msg_2"]);
    expect(afters(fake)).toEqual([null, "cur_2"]);
  });

  it("says whether a next page exists", async () => {
    const first = await fakeClient(threePages()).messages.list({ limit: 2 });
    const last = await (await first.nextPage()).nextPage();
    expect([first.hasNextPage(), last.hasNextPage()]).toEqual([true, false]);
  });

  it("refuses nextPage() on the last page without a request", async () => {
    const fake = threePages();
    const last = await fakeClient(fake).messages.list({ after: "cur_3" });
    await expect(last.nextPage()).rejects.toBeInstanceOf(RangeError);
    expect(fake.requests).toHaveLength(1);
  });

  it("walks every page from itself on with pages()", async () => {
    const first = await fakeClient(threePages()).messages.list({ limit: 2 });
    const pages: string[][] = [];
    for await (const page of first.pages()) pages.push(page.data.map((message) => message.id));
    expect(pages).toEqual([["msg_5", "msg_4"], ["msg_3", "msg_2"], ["msg_1"]]);
  });

  it("yields its own items and those of the pages after it with for await", async () => {
    const second = await (await fakeClient(threePages()).messages.list({ limit: 2 })).nextPage();
    const ids: string[] = [];
    for await (const message of second) ids.push(message.id);
    expect(ids).toEqual(["msg_3", "msg_2", "msg_1"]);
  });
});

describe("every list method", () => {
  it.each([
    ["messages.list", (mr: Mailroom) => mr.messages.list(), "/v1/messages"],
    ["messages.listEvents", (mr: Mailroom) => mr.messages.listEvents("msg_1"), "/v1/messages/msg_1/events"],
    ["messages.listReplies", (mr: Mailroom) => mr.messages.listReplies("msg_1"), "/v1/messages/msg_1/replies"],
    ["events.list", (mr: Mailroom) => mr.events.list(), "/v1/events"],
    ["apiKeys.list", (mr: Mailroom) => mr.apiKeys.list(), "/v1/api-keys"],
    ["domains.list", (mr: Mailroom) => mr.domains.list(), "/v1/domains"],
    ["suppressions.list", (mr: Mailroom) => mr.suppressions.list(), "/v1/suppressions"],
  ] as const)("%s pages through its path with after", async (_name, list, path) => {
    const fake = threePages();
    const ids: string[] = [];
    for await (const item of list(fakeClient(fake))) ids.push(item.id);
    expect(ids).toHaveLength(5);
    expect(fake.requests.map((request) => `${request.url.pathname}${request.url.search}`)).toEqual([path, `${path}?after=cur_2`, `${path}?after=cur_3`]);
  });
});
