import { describe, expect, it } from "vitest";
import type { Event, Message, MessageSummary, PageBody as Page } from "mailroom";
import type { TestServer } from "../../test/helpers/http-server.js";
import { api, contractExample, type FileServer, problemOf, runCli, stubApi, useTestServer } from "./helpers.js";

let server: TestServer;
let env: Record<string, string>;
let mailroom: FileServer["mailroom"];
useTestServer((started) => ({ server, env, mailroom } = started));

const inAnHour = () => new Date(server.testApp.clock.now() + 3_600_000).toISOString();

/** Sends `count` messages with `tag`, one after another; answers their ids, oldest first. */
async function sendTagged(tag: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await mailroom.send({ to: `reader${i}@example.com`, tags: [tag] })).id);
  return ids;
}

describe("mailroom messages list", () => {
  it("prints one page as the API answers it, with the cursor that --after takes to the next", async () => {
    const [oldest, middle, newest] = await sendTagged("paging", 3);

    const first = await runCli(["messages", "list", "--tag", "paging", "--limit", "2"], { env });
    expect(first.code, first.stderr).toBe(0);
    const page = first.json<Page<MessageSummary>>();
    expect(page.data.map((message) => message.id)).toEqual([newest, middle]);
    expect(page.has_more).toBe(true);
    expect(page.next_cursor).toEqual(expect.any(String));

    const second = await runCli(["messages", "list", "--tag", "paging", "--limit", "2", "--after", page.next_cursor as string], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(second.json<Page<MessageSummary>>()).toEqual({ data: [expect.objectContaining({ id: oldest })], has_more: false, next_cursor: null });
  });

  it("fetches every page with --all and prints the items under data alone", async () => {
    const ids = await sendTagged("everything", 3);

    const result = await runCli(["messages", "list", "--tag", "everything", "--limit", "1", "--all"], { env });

    expect(result.code, result.stderr).toBe(0);
    const all = result.json<{ data: MessageSummary[] }>();
    expect(Object.keys(all)).toEqual(["data"]);
    expect(all.data.map((message) => message.id)).toEqual([...ids].reverse());
  });

  it("keeps only messages in the --status given", async () => {
    const queued = await mailroom.send({ to: "ada@example.com", tags: ["by-status"] });
    const scheduled = await mailroom.send({ to: "ada@example.com", tags: ["by-status"], scheduled_at: inAnHour() });

    const result = await runCli(["messages", "list", "--tag", "by-status", "--status", "scheduled"], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Page<MessageSummary>>().data.map((message) => message.id)).toEqual([scheduled.id]);
    expect(queued.status).toBe("queued");
  });

  it("keeps only messages to the --recipient given, whether to, cc or bcc", async () => {
    const to = await mailroom.send({ to: "lin@example.com", tags: ["by-recipient"] });
    const cc = await mailroom.send({ to: "ada@example.com", cc: "lin@example.com", tags: ["by-recipient"] });
    await mailroom.send({ to: "ada@example.com", tags: ["by-recipient"] });

    const result = await runCli(["messages", "list", "--tag", "by-recipient", "--recipient", "lin@example.com"], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Page<MessageSummary>>().data.map((message) => message.id)).toEqual([cc.id, to.id]);
  });

  it("keeps only messages with the --tag given", async () => {
    const tagged = await mailroom.send({ to: "ada@example.com", tags: ["needle", "hay"] });
    await mailroom.send({ to: "ada@example.com", tags: ["hay"] });

    const result = await runCli(["messages", "list", "--tag", "needle"], { env });

    expect(result.json<Page<MessageSummary>>().data.map((message) => message.id)).toEqual([tagged.id]);
  });

  it("leaves out messages sent after --created-before", async () => {
    await mailroom.send({ to: "ada@example.com", tags: ["recent"] });

    const before = await runCli(["messages", "list", "--tag", "recent", "--created-before", "1h"], { env });
    const after = await runCli(["messages", "list", "--tag", "recent", "--created-after", "1h"], { env });

    expect(before.json<Page<MessageSummary>>().data).toEqual([]);
    expect(after.json<Page<MessageSummary>>().data).toHaveLength(1);
  });

  it("refuses a --status the API does not have, before calling it", async () => {
    const requests: string[] = [];
    const fetch = (request: Request) => (requests.push(request.url), globalThis.fetch(request));

    const result = await runCli(["messages", "list", "--status", "lost"], { env, fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringContaining('Argument: status, Given: "lost", Choices: "scheduled"') });
    expect(requests).toEqual([]);
  });

  describe("on a terminal", () => {
    it("prints a table of id, status, recipients, subject and time", async () => {
      const [first, second] = await sendTagged("table", 2);

      const result = await runCli(["messages", "list", "--tag", "table"], { env, tty: true });

      expect(result.code, result.stderr).toBe(0);
      const lines = result.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^ID\s+STATUS\s+TO\s+SUBJECT\s+CREATED$/);
      expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 3))).toEqual([
        [second, "queued", "reader1@example.com"],
        [first, "queued", "reader0@example.com"],
      ]);
    });

    it("ends with the --after to give for the next page when there is one", async () => {
      await sendTagged("hint", 2);
      const { next_cursor } = await mailroom.get<Page<MessageSummary>>("/v1/messages?tag=hint&limit=1");

      const result = await runCli(["messages", "list", "--tag", "hint", "--limit", "1"], { env, tty: true });

      expect(result.stdout).toContain(`\n\nMore: --after ${next_cursor} (or --all)\n`);
    });

    it("gives no hint on the last page", async () => {
      await sendTagged("last-page", 1);

      const result = await runCli(["messages", "list", "--tag", "last-page"], { env, tty: true });

      expect(result.stdout).not.toContain("More:");
    });

    it("says (none) when nothing matches", async () => {
      const result = await runCli(["messages", "list", "--tag", "no-such-tag"], { env, tty: true });

      expect(result.stdout).toBe("(none)\n");
    });
  });
});

describe("mailroom messages get", () => {
  it("prints the message as the API answers it", async () => {
    const { id } = await mailroom.send({ to: "ada@example.com", cc: "grace@example.com", subject: "Got it" });

    const result = await runCli(["messages", "get", id], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual(await mailroom.get(`/v1/messages/${id}`));
  });

  it("shows the message and each recipient's status on a terminal", async () => {
    const { id } = await mailroom.send({ to: "ada@example.com", cc: "grace@example.com", subject: "Got it" });

    const result = await runCli(["messages", "get", id], { env, tty: true });

    expect(result.stdout).toMatch(new RegExp(`^id\\s+${id}$`, "m"));
    expect(result.stdout).toMatch(/^subject\s+Got it$/m);
    expect(result.stdout).toMatch(/^RECIPIENT\s+TYPE\s+STATUS\s+ENGAGEMENT\s+DETAIL$/m);
    expect(result.stdout).toMatch(/^tracking\s+none$/m);
    expect(result.stdout).toMatch(/^engagement\s+0 opens, 0 clicks, 0 replies$/m);
    expect(result.stdout).toMatch(/^ada@example\.com\s+to\s+queued$/m);
    expect(result.stdout).toMatch(/^grace@example\.com\s+cc\s+queued$/m);
  });

  it("exits 1 with a 404 not_found problem for an id that does not exist", async () => {
    const result = await runCli(["messages", "get", "msg_01jc3v6q9k2m8r4t7w0y5z1b3d"], { env });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(problemOf(result)).toMatchObject({ status: 404, code: "not_found" });
  });

  it("answers 404 for another workspace's message, as for one that does not exist", async () => {
    const theirs = await api(server, server.testApp.other.sandboxKey).send({ to: "ada@example.com", from: "Globex <hi@globex.example>" });

    const result = await runCli(["messages", "get", theirs.id], { env });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("mailroom messages cancel", () => {
  it("cancels a scheduled message and prints it canceled", async () => {
    const { id } = await mailroom.send({ to: "ada@example.com", scheduled_at: inAnHour() });

    const result = await runCli(["messages", "cancel", id], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Message>()).toMatchObject({ id, status: "canceled" });
    expect(await mailroom.get(`/v1/messages/${id}`)).toMatchObject({ status: "canceled" });
  });

  it("POSTs with an Idempotency-Key, the caller's own with --idempotency-key", async () => {
    const stub = stubApi(200, contractExample("CanceledMessage"));
    const stubEnv = { MAILROOM_API_KEY: "svc_test_unused" };

    await runCli(["messages", "cancel", "msg_01jc3v6q9k2m8r4t7w0y5z1b3d"], { env: stubEnv, fetch: stub.fetch });
    const given = await runCli(["messages", "cancel", "msg_01jc3v6q9k2m8r4t7w0y5z1b3d", "--idempotency-key", "cancel-trial"], { env: stubEnv, fetch: stub.fetch });

    expect(given.code, given.stderr).toBe(0);
    expect(stub.seen).toMatchObject([
      { method: "POST", target: "/v1/messages/msg_01jc3v6q9k2m8r4t7w0y5z1b3d/cancel", idempotencyKey: expect.any(String) },
      { method: "POST", target: "/v1/messages/msg_01jc3v6q9k2m8r4t7w0y5z1b3d/cancel", idempotencyKey: "cancel-trial" },
    ]);
  });

  it("says on its --help what the API cancels: a message not yet handed off, scheduled, queued or deferred", async () => {
    const result = await runCli(["messages", "cancel", "--help"], { env: {} });

    expect(result.code).toBe(0);
    expect(result.stdout.replace(/\s+/g, " ")).toContain("Cancel a message not yet handed off: scheduled, queued or deferred");
    expect(result.stdout).not.toContain("scheduled message");
  });

  it("says Canceled. on a terminal", async () => {
    const { id } = await mailroom.send({ to: "ada@example.com", scheduled_at: inAnHour() });

    const result = await runCli(["messages", "cancel", id], { env, tty: true });

    expect(result.stdout).toMatch(/\n\nCanceled\.\n$/);
  });

  it("exits 1 with 409 message_not_cancelable for a message already delivered, which stays delivered", async () => {
    const { id } = await mailroom.send({ to: "delivered@simulator.test" });
    await server.testApp.drain();

    const result = await runCli(["messages", "cancel", id], { env });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 409, code: "message_not_cancelable" });
    expect(await mailroom.get(`/v1/messages/${id}`)).toMatchObject({ status: "delivered" });
  });
});

describe("mailroom messages reschedule", () => {
  const inThreeHours = () => new Date(server.testApp.clock.now() + 3 * 3_600_000).toISOString();

  it("moves a scheduled message to --at and prints it with its new scheduled_at", async () => {
    const { id } = await mailroom.send({ to: "ada@example.com", scheduled_at: inAnHour() });
    const later = inThreeHours();

    const result = await runCli(["messages", "reschedule", id, "--at", later], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Message>()).toMatchObject({ id, status: "scheduled", scheduled_at: later });
    expect(await mailroom.get(`/v1/messages/${id}`)).toMatchObject({ status: "scheduled", scheduled_at: later });
  });

  it("takes --at as a delay from now too", async () => {
    const { id } = await mailroom.send({ to: "ada@example.com", scheduled_at: inAnHour() });

    const result = await runCli(["messages", "reschedule", id, "--at", "2h"], { env });

    expect(result.code, result.stderr).toBe(0);
    // The CLI reads "2h" by the machine's clock, the server checks it by its own (a test clock).
    expect(Date.parse(result.json<Message>().scheduled_at ?? "")).toBeGreaterThan(Date.now() + 3_600_000);
  });

  it("makes it due at once with --now, and the worker then sends it", async () => {
    const { id } = await mailroom.send({ to: "delivered@simulator.test", scheduled_at: inAnHour() });

    const result = await runCli(["messages", "reschedule", id, "--now"], { env });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Message>()).toMatchObject({ id, scheduled_at: new Date(server.testApp.clock.now()).toISOString() });
    await server.testApp.drain();
    expect(await mailroom.get(`/v1/messages/${id}`)).toMatchObject({ status: "delivered" });
  });

  it("says Rescheduled for the new time, or Due now, on a terminal", async () => {
    const { id } = await mailroom.send({ to: "ada@example.com", scheduled_at: inAnHour() });
    const later = inThreeHours();

    const moved = await runCli(["messages", "reschedule", id, "--at", later], { env, tty: true });
    const now = await runCli(["messages", "reschedule", id, "--now"], { env, tty: true });

    expect(moved.stdout.endsWith(`\n\nRescheduled for ${later}.\n`), moved.stdout).toBe(true);
    expect(now.stdout).toMatch(/\n\nDue now: it is sent next\.\n$/);
  });

  it("exits 1 with 409 message_not_scheduled for a message already queued, which stays queued", async () => {
    const { id } = await mailroom.send({ to: "ada@example.com" });

    const result = await runCli(["messages", "reschedule", id, "--now"], { env });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 409, code: "message_not_scheduled" });
    expect(await mailroom.get(`/v1/messages/${id}`)).toMatchObject({ status: "queued", scheduled_at: null });
  });

  it("exits 1 with 422 validation_failed at /scheduled_at for a time more than 30 days ahead", async () => {
    const { id } = await mailroom.send({ to: "ada@example.com", scheduled_at: inAnHour() });

    const result = await runCli(["messages", "reschedule", id, "--at", "31d"], { env });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 422, code: "validation_failed", errors: [expect.objectContaining({ pointer: "/scheduled_at" })] });
  });

  it.each([
    ["neither --at nor --now", [], "Give the new time with --at WHEN"],
    ["both --at and --now", ["--at", "2h", "--now"], "Give either --at WHEN or --now, not both."],
    ["an --at that is no time", ["--at", "tomorrow"], "--at takes an RFC 3339 time"],
    ["an --at without its value", ["--at"], "Not enough arguments following: at"],
  ])("exits 2 for %s, before any request", async (_case, flags, message) => {
    const stub = stubApi(200, {});

    const result = await runCli(["messages", "reschedule", "msg_01jc3v6q9k2m8r4t7w0y5z1b3d", ...flags], { env: { MAILROOM_API_KEY: "svc_test_unused" }, fetch: stub.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringContaining(message) });
    expect(stub.seen).toEqual([]);
  });

  it("POSTs { scheduled_at } with an Idempotency-Key, the caller's own with --idempotency-key", async () => {
    const stub = stubApi(200, contractExample("ScheduledMessage"));
    const stubEnv = { MAILROOM_API_KEY: "svc_test_unused" };

    await runCli(["messages", "reschedule", "msg_01jc3v6q9k2m8r4t7w0y5z1b3d", "--at", "2026-11-23T10:00:00+01:00"], { env: stubEnv, fetch: stub.fetch });
    await runCli(["messages", "reschedule", "msg_01jc3v6q9k2m8r4t7w0y5z1b3d", "--now", "--idempotency-key", "send-trial-now"], { env: stubEnv, fetch: stub.fetch });

    expect(stub.seen).toMatchObject([
      { method: "POST", target: "/v1/messages/msg_01jc3v6q9k2m8r4t7w0y5z1b3d/reschedule", body: { scheduled_at: "2026-11-23T09:00:00.000Z" }, idempotencyKey: expect.any(String) },
      { method: "POST", target: "/v1/messages/msg_01jc3v6q9k2m8r4t7w0y5z1b3d/reschedule", body: { scheduled_at: null }, idempotencyKey: "send-trial-now" },
    ]);
  });
});

describe("mailroom messages list-events", () => {
  it("prints the message's events in the order they happened", async () => {
    const { id } = await mailroom.send({ to: "clicked@simulator.test" });
    await server.testApp.drain();

    const result = await runCli(["messages", "list-events", id], { env });

    expect(result.code, result.stderr).toBe(0);
    const { data } = result.json<Page<Event>>();
    expect(data.map((event) => [event.sequence, event.type])).toEqual([
      [1, "message.queued"],
      [2, "message.delivered"],
      [3, "message.opened"],
      [4, "message.clicked"],
    ]);
    expect(data.every((event) => event.message_id === id)).toBe(true);
  });

  it("answers to messages events too", async () => {
    const { id } = await mailroom.send({ to: "delivered@simulator.test" });
    await server.testApp.drain();

    const [long, short] = await Promise.all([runCli(["messages", "list-events", id], { env }), runCli(["messages", "events", id], { env })]);

    expect(short.code).toBe(0);
    expect(short.json()).toEqual(long.json());
  });

  it("prints a table of the events on a terminal", async () => {
    const { id } = await mailroom.send({ to: "delivered@simulator.test" });
    await server.testApp.drain();

    const result = await runCli(["messages", "events", id], { env, tty: true });

    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+MESSAGE\s+RECIPIENT\s+CREATED$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(1, 3))).toEqual([
      ["message.queued", id],
      ["message.delivered", id],
    ]);
  });
});
