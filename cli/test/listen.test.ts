import { afterEach, describe, expect, it } from "vitest";
import type { Event, EventType, PageBody } from "mailroom";
import { VERSION } from "../src/version.js";
import type { TestServer } from "../../test/helpers/http-server.js";
import {
  type Delivery,
  type ReceiverAnswer,
  eventually,
  type FileServer,
  interruption,
  problemBody,
  problemOf,
  refusedConnection,
  runCli,
  type RunningCli,
  startCli,
  startWebhookReceiver,
  useTestServer,
  type WebhookReceiver,
} from "./helpers.js";

/*
 * `mailroom listen` forwards events to a real HTTP receiver on loopback, which verifies every
 * delivery with the public `standardwebhooks` library, as a user's receiver would. The events come
 * from a scripted stand-in for `GET /v1/events` (so that the order, timing and pagination of each
 * case are exact), and, in the last case, from the real server's sandbox pipeline.
 */

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const stubEnv = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };

const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

/** A receiver on a loopback port that verifies each delivery (see helpers.ts), closed after the test. */
async function startReceiver(secret: string | (() => string), answer?: (delivery: Delivery, index: number) => ReceiverAnswer) {
  const receiver = await startWebhookReceiver(secret, answer);
  receivers.push(receiver);
  return receiver;
}

let sequence = 0;
/** An event as the API lists it, `secondsAgo` before now. */
function anEvent(type: EventType, secondsAgo = 0): Event {
  sequence++;
  const id = `evt_${String(sequence).padStart(26, "0")}`;
  return {
    id,
    object: "event",
    type,
    created_at: new Date(Date.now() - secondsAgo * 1000).toISOString(),
    environment: "sandbox",
    message_id: `msg_${String(sequence).padStart(26, "0")}`,
    recipient: "ada@example.com",
    sequence: 1,
    from_status: null,
    to_status: null,
    tags: ["listen"],
    metadata: {},
    idempotency_key: null,
    data: {},
  };
}

/**
 * A stand-in for `GET /v1/events` over a list the test adds to: newest first, `type` and
 * `created_after` (inclusive) filters, pages of `limit` with a cursor, as the API answers.
 */
function eventsApi(initial: Event[] = [], { status = 200 }: { status?: number } = {}) {
  const events = [...initial];
  const queries: URLSearchParams[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.pathname !== "/v1/events") throw new Error(`unexpected request ${request.method} ${url.pathname}`);
    queries.push(url.searchParams);
    if (status !== 200) return new Response(JSON.stringify(problemBody(status, "invalid_api_key")), { status, headers: { "content-type": "application/problem+json" } });
    const type = url.searchParams.get("type");
    const after = url.searchParams.get("created_after");
    const limit = Number(url.searchParams.get("limit") ?? 20);
    const start = Number(url.searchParams.get("after") ?? 0);
    const matching = events
      .filter((event) => (type === null || event.type === type) && (after === null || event.created_at >= after))
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
    const data = matching.slice(start, start + limit);
    const more = start + limit < matching.length;
    const page: PageBody<Event> = { data, has_more: more, next_cursor: more ? String(start + limit) : null };
    return new Response(JSON.stringify(page), { status: 200, headers: { "content-type": "application/json" } });
  };
  return { events, queries, fetch, add: (...added: Event[]) => events.push(...added) };
}

interface Forwarded {
  id: string;
  type: EventType;
  created_at: string;
  message_id: string;
  status: number | null;
  ok: boolean;
  attempts: number;
  duration_ms: number;
  error?: string;
}

const linesOf = (stdout: string) =>
  stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Forwarded);

/** Starts `mailroom listen` polling every 0.1 s and waits until it says it is forwarding. */
async function startListen(flags: string[], options: { env: Record<string, string>; fetch?: (request: Request) => Promise<Response>; tty?: boolean }) {
  const ctrlC = interruption();
  const listen: RunningCli = startCli(["listen", "--interval", "0.1", ...flags], { ...options, interrupted: ctrlC.interrupted });
  await eventually(() => expect(listen.stderr()).toContain("Forwarding "));
  return {
    listen,
    async stop() {
      // A few more polls first: a listener that forwards an event twice would do it now.
      await new Promise((resolve) => setTimeout(resolve, 350));
      ctrlC.interrupt();
      return listen.done;
    },
  };
}

describe("mailroom listen", () => {
  it("prints a new whsec_ secret at start and forwards each new event once, oldest first, signed so that standardwebhooks verifies it", async () => {
    const api = eventsApi();
    let secret = "";
    const receiver = await startReceiver(() => secret);
    const { listen, stop } = await startListen(["--forward-to", receiver.url], { env: stubEnv, fetch: api.fetch });
    secret = /^Signing secret: (whsec_[A-Za-z0-9+/]+=*)$/m.exec(listen.stderr())?.[1] ?? "";
    expect(secret).not.toBe("");

    // Listed newest first by the API; forwarded in the order they happened.
    const [queued, delivered, opened] = [anEvent("message.queued", 0.3), anEvent("message.delivered", 0.2), anEvent("message.opened", 0.1)] as [Event, Event, Event];
    api.add(opened, queued, delivered);
    await eventually(() => expect(receiver.deliveries).toHaveLength(3));
    const { code, stdout, stderr } = await stop();

    expect(code).toBe(0);
    expect(receiver.deliveries.map((delivery) => delivery.verified)).toEqual([queued, delivered, opened]);
    expect(receiver.deliveries.map((delivery) => delivery.headers["webhook-id"])).toEqual([queued.id, delivered.id, opened.id]);
    expect(receiver.deliveries.map((delivery) => delivery.headers["content-type"])).toEqual(["application/json", "application/json", "application/json"]);
    // Said to be the CLI's forwarder, with its version, as its API calls say the CLI's.
    expect(receiver.deliveries.map((delivery) => delivery.headers["user-agent"])).toEqual(Array(3).fill(`mailroom-cli/${VERSION} (listen)`));
    expect(linesOf(stdout)).toEqual(
      [queued, delivered, opened].map((event) => ({
        id: event.id,
        type: event.type,
        created_at: event.created_at,
        message_id: event.message_id,
        status: 204,
        ok: true,
        attempts: 1,
        duration_ms: expect.any(Number),
      })),
    );
    expect(stderr).toMatch(/Stopped: 3 events forwarded, 0 not accepted by the receiver\.\n$/);
  });

  it("does not forward the events from before it started", async () => {
    const before = anEvent("message.delivered", 5);
    const api = eventsApi([before]);
    const receiver = await startReceiver(SECRET);
    const { stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET], { env: stubEnv, fetch: api.fetch });

    const after = anEvent("message.bounced");
    api.add(after);
    await eventually(() => expect(receiver.deliveries).toHaveLength(1));
    await stop();

    expect(receiver.deliveries.map((delivery) => delivery.verified)).toEqual([after]);
  });

  it("forwards an event created while it looked at the existing ones", async () => {
    const api = eventsApi([anEvent("message.queued", 2)]);
    const between = anEvent("message.delivered", 1);
    let requests = 0;
    // The event appears right after the first look at the list, before any other request.
    const fetch = async (request: Request) => {
      const response = await api.fetch(request);
      if (++requests === 1) api.add(between);
      return response;
    };
    const receiver = await startReceiver(SECRET);
    const { stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET], { env: stubEnv, fetch });

    await eventually(() => expect(receiver.deliveries).toHaveLength(1));
    await stop();

    expect(receiver.deliveries.map((delivery) => (delivery.verified as Event).id)).toEqual([between.id]);
  });

  it("signs with MAILROOM_WEBHOOK_SECRET when there is no --secret, so that the secret stays out of the process list", async () => {
    const api = eventsApi();
    const receiver = await startReceiver(SECRET);
    const { listen, stop } = await startListen(["--forward-to", receiver.url], { env: { ...stubEnv, MAILROOM_WEBHOOK_SECRET: SECRET }, fetch: api.fetch });
    const event = anEvent("message.delivered");
    api.add(event);
    await eventually(() => expect(receiver.deliveries).toHaveLength(1));
    await stop();

    expect(receiver.deliveries[0]?.verified).toEqual(event);
    expect(listen.stderr()).toContain("Signing with the secret in MAILROOM_WEBHOOK_SECRET.\n");
    expect(listen.stderr()).not.toContain(SECRET);
  });

  it("reads MAILROOM_WEBHOOK_SECRET as the other variables are read: without the line break a paste leaves around it", async () => {
    const api = eventsApi();
    const receiver = await startReceiver(SECRET);
    const { stop } = await startListen(["--forward-to", receiver.url], { env: { ...stubEnv, MAILROOM_WEBHOOK_SECRET: ` ${SECRET}\n` }, fetch: api.fetch });
    const event = anEvent("message.delivered");
    api.add(event);
    await eventually(() => expect(receiver.deliveries).toHaveLength(1));
    await stop();

    expect(receiver.deliveries[0]?.verified).toEqual(event);
  });

  it("forwards an event committed late, with a created_at before the newest one already seen", async () => {
    const api = eventsApi([anEvent("message.queued", 1)]);
    const receiver = await startReceiver(SECRET);
    const { stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET], { env: stubEnv, fetch: api.fetch });

    const newest = anEvent("message.delivered");
    api.add(newest);
    await eventually(() => expect(receiver.deliveries).toHaveLength(1));
    const late = anEvent("message.opened", 3);
    api.add(late);
    await eventually(() => expect(receiver.deliveries).toHaveLength(2));
    await stop();

    expect(receiver.deliveries.map((delivery) => (delivery.verified as Event).id)).toEqual([newest.id, late.id]);
  });

  it("forwards the events since --since first, then new ones, walking every page", async () => {
    const earlier = Array.from({ length: 150 }, (_, index) => anEvent("message.delivered", 60 - index * 0.1));
    const api = eventsApi([anEvent("message.queued", 3 * 3600), ...earlier]);
    const receiver = await startReceiver(SECRET);
    const { stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET, "--since", "1h"], { env: stubEnv, fetch: api.fetch });

    await eventually(() => expect(receiver.deliveries).toHaveLength(150));
    const later = anEvent("message.clicked");
    api.add(later);
    await eventually(() => expect(receiver.deliveries).toHaveLength(151));
    await stop();

    expect(receiver.deliveries.map((delivery) => (delivery.verified as Event).id)).toEqual([...earlier, later].map((event) => event.id));
    expect(api.queries.some((query) => query.get("after") === "100")).toBe(true);
  });

  it("forwards only the --events types, filtering several itself since the API takes one type", async () => {
    const api = eventsApi();
    const receiver = await startReceiver(SECRET);
    const { stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET, "--events", "message.delivered,message.bounced"], { env: stubEnv, fetch: api.fetch });

    const delivered = anEvent("message.delivered", 0.3);
    const opened = anEvent("message.opened", 0.2);
    const bounced = anEvent("message.bounced", 0.1);
    api.add(delivered, opened, bounced);
    await eventually(() => expect(receiver.deliveries).toHaveLength(2));
    await stop();

    expect(receiver.deliveries.map((delivery) => (delivery.verified as Event).type)).toEqual(["message.delivered", "message.bounced"]);
    expect(api.queries.every((query) => !query.has("type"))).toBe(true);
  });

  it.each(["--events", "--event-type", "--type"])("asks the API for the one type given to %s, as every command that takes event types", async (flag) => {
    const api = eventsApi();
    const receiver = await startReceiver(SECRET);
    const { stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET, flag, "message.bounced"], { env: stubEnv, fetch: api.fetch });
    api.add(anEvent("message.delivered"), anEvent("message.bounced"));
    await eventually(() => expect(receiver.deliveries).toHaveLength(1));
    await stop();

    expect(api.queries.every((query) => query.get("type") === "message.bounced")).toBe(true);
  });

  it("retries a refused forward with backoff, with the same webhook-id and a valid signature each time", async () => {
    const api = eventsApi();
    const receiver = await startReceiver(SECRET, (_delivery, index) => [500, 503, 200][index] ?? 200);
    const { listen, stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET], { env: stubEnv, fetch: api.fetch });

    const event = anEvent("message.delivered");
    api.add(event);
    await eventually(() => expect(linesOf(listen.stdout())).toHaveLength(1), 10_000);
    await stop();

    expect(receiver.deliveries).toHaveLength(3);
    expect(receiver.deliveries.map((delivery) => delivery.headers["webhook-id"])).toEqual([event.id, event.id, event.id]);
    expect(receiver.deliveries.map((delivery) => delivery.verified)).toEqual([event, event, event]);
    const [line] = linesOf(listen.stdout());
    expect(line).toMatchObject({ id: event.id, status: 200, ok: true, attempts: 3 });
    // 0.5 s, then 1 s between the attempts.
    expect(line?.duration_ms).toBeGreaterThanOrEqual(1_500);
  });

  it("waits as long as the receiver's Retry-After asks before retrying, when that is longer than the backoff", async () => {
    const api = eventsApi();
    const receiver = await startReceiver(SECRET, (_delivery, index) => (index === 0 ? { status: 429, headers: { "retry-after": "2" } } : 204));
    const { listen, stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET], { env: stubEnv, fetch: api.fetch });

    api.add(anEvent("message.delivered"));
    await eventually(() => expect(linesOf(listen.stdout())).toHaveLength(1), 10_000);
    await stop();

    const [line] = linesOf(listen.stdout());
    expect(line).toMatchObject({ status: 204, ok: true, attempts: 2 });
    // Retry-After: 2, not the first backoff's 0.5 s.
    expect(line?.duration_ms).toBeGreaterThanOrEqual(2_000);
  });

  it("reports an event the receiver keeps refusing, and goes on with the next", async () => {
    const api = eventsApi();
    const failing = anEvent("message.bounced", 0.2);
    const next = anEvent("message.delivered", 0.1);
    const receiver = await startReceiver(SECRET, (delivery) => ((delivery.verified as Event).id === failing.id ? 500 : 204));
    const { listen, stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET, "--retries", "1"], { env: stubEnv, fetch: api.fetch });

    api.add(failing, next);
    await eventually(() => expect(linesOf(listen.stdout())).toHaveLength(2));
    const { code, stderr } = await stop();

    expect(code).toBe(0);
    expect(linesOf(listen.stdout())).toMatchObject([
      { id: failing.id, status: 500, ok: false, attempts: 2 },
      { id: next.id, status: 204, ok: true, attempts: 1 },
    ]);
    expect(stderr).toMatch(/Stopped: 2 events forwarded, 1 not accepted by the receiver\.\n$/);
  });

  it("does not follow a redirect: a 3xx is a refused forward", async () => {
    const api = eventsApi();
    const receiver = await startReceiver(SECRET, () => 307);
    const { listen, stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET, "--retries", "0"], { env: stubEnv, fetch: api.fetch });
    api.add(anEvent("message.delivered"));
    await eventually(() => expect(linesOf(listen.stdout())).toHaveLength(1));
    await stop();

    expect(linesOf(listen.stdout())).toMatchObject([{ status: 307, ok: false, attempts: 1 }]);
    expect(receiver.deliveries).toHaveLength(1);
  });

  it("reports a receiver that is not listening as no answer, with the reason", async () => {
    const api = eventsApi();
    const closed = await startReceiver(SECRET);
    await receivers.pop()?.close();
    const { listen, stop } = await startListen(["--forward-to", closed.url, "--secret", SECRET, "--retries", "0"], { env: stubEnv, fetch: api.fetch });
    api.add(anEvent("message.delivered"));
    await eventually(() => expect(linesOf(listen.stdout())).toHaveLength(1));
    await stop();

    expect(linesOf(listen.stdout())).toMatchObject([{ status: null, ok: false, attempts: 1, error: "ECONNREFUSED" }]);
  });

  it("prints one line per forward on a terminal, and the secret given is not echoed", async () => {
    const api = eventsApi();
    const receiver = await startReceiver(SECRET);
    const { stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET], { env: stubEnv, fetch: api.fetch, tty: true });
    const event = anEvent("message.delivered");
    api.add(event);
    await eventually(() => expect(receiver.deliveries).toHaveLength(1));
    const { code, stdout, stderr } = await stop();

    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^${event.created_at}  message\\.delivered     ${event.id}  → 204  \\d+ ms\\n$`));
    expect(stderr).toContain(`Forwarding every event to ${receiver.url} (polling every 0.1 s; Ctrl-C to stop).\nSigning with the secret given (--secret).\n`);
    expect(stderr).not.toContain(SECRET);
  });

  it("stops at once when interrupted during a retry's backoff, without reporting that event", async () => {
    const api = eventsApi();
    const receiver = await startReceiver(SECRET, () => 500);
    const ctrlC = interruption();
    const listen = startCli(["listen", "--forward-to", receiver.url, "--secret", SECRET, "--interval", "0.1", "--retries", "10"], { env: stubEnv, fetch: api.fetch, interrupted: ctrlC.interrupted });
    await eventually(() => expect(listen.stderr()).toContain("Forwarding "));
    api.add(anEvent("message.delivered"));
    await eventually(() => expect(receiver.deliveries.length).toBeGreaterThanOrEqual(2));

    const interruptedAt = Date.now();
    ctrlC.interrupt();
    const { code, stdout, stderr } = await listen.done;

    expect(Date.now() - interruptedAt).toBeLessThan(500);
    expect(code).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/Stopped: 0 events forwarded/);
  });

  it("keeps listening through an outage of the API, warning on stderr", async () => {
    const api = eventsApi();
    let down = false;
    const flaky = async (request: Request) => (down ? refusedConnection() : api.fetch(request));
    const receiver = await startReceiver(SECRET);
    const { listen, stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET], { env: stubEnv, fetch: flaky });

    down = true;
    await eventually(() => expect(listen.stderr()).toMatch(/^warning: .* — still listening, next try in 0\.1 s$/m), 15_000);
    api.add(anEvent("message.delivered"));
    down = false;
    await eventually(() => expect(receiver.deliveries).toHaveLength(1));
    const { code } = await stop();

    expect(code).toBe(0);
  });

  it("waits out an outage of the API at its start, warning on stderr, then forwards", async () => {
    const api = eventsApi([anEvent("message.delivered", 5)]);
    let down = true;
    const flaky = async (request: Request) => (down ? refusedConnection() : api.fetch(request));
    const receiver = await startReceiver(SECRET);
    const ctrlC = interruption();
    const listen = startCli(["listen", "--forward-to", receiver.url, "--secret", SECRET, "--interval", "0.1"], { env: stubEnv, fetch: flaky, interrupted: ctrlC.interrupted });
    await eventually(() => expect(listen.stderr()).toMatch(/^warning: .* — still listening, next try in 0\.1 s$/m));

    down = false;
    await eventually(() => expect(listen.stderr()).toContain("Forwarding "));
    const event = anEvent("message.delivered");
    api.add(event);
    await eventually(() => expect(receiver.deliveries).toHaveLength(1));
    ctrlC.interrupt();
    const { code } = await listen.done;

    expect(code).toBe(0);
    expect(receiver.deliveries.map((delivery) => delivery.headers["webhook-id"])).toEqual([event.id]);
  });

  it("ends with exit 1 when the key is refused: that will not fix itself", async () => {
    const api = eventsApi([], { status: 401 });
    const receiver = await startReceiver(SECRET);

    const result = await runCli(["listen", "--forward-to", receiver.url, "--interval", "0.1"], { env: stubEnv, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 401, code: "invalid_api_key" });
    expect(receiver.deliveries).toEqual([]);
  });

  it.each([
    [[], "Give the receiver's URL with --forward-to."],
    [["--forward-to", "localhost:4242"], "--forward-to takes an http or https URL"],
    [["--forward-to", "not a url"], "--forward-to takes a URL such as http://localhost:4242/webhooks"],
    [["--forward-to", "http://localhost:4242", "--events", "message.delivered,message.sent"], '--event-type: unknown event type "message.sent"'],
    [["--forward-to", "http://localhost:4242", "--type", "message.sent"], '--event-type: unknown event type "message.sent"'],
    [["--forward-to", "http://localhost:4242", "--events", "message.bounced,domain.failed"], '--event-type: "domain.failed" goes to webhook endpoints only, not to the event list; the types are message.queued,'],
    [["--forward-to", "http://localhost:4242", "--secret", "hunter2!"], "--secret takes a Standard Webhooks secret"],
    [["--forward-to", "http://localhost:4242", "--secret", "bad"], "--secret takes a Standard Webhooks secret: whsec_ followed by the base64 of at least 24 bytes"],
    [["--forward-to", "http://localhost:4242", "--secret", "whsec_abc"], "--secret takes a Standard Webhooks secret: whsec_ followed by the base64 of at least 24 bytes"],
    [["--forward-to", "http://localhost:4242", "--secret", "whsec_MfKQ 9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], "--secret takes a Standard Webhooks secret"],
    [["--forward-to", "http://localhost:4242", "--secret", `whsec_${Buffer.alloc(16, 7).toString("base64")}`], "--secret takes a Standard Webhooks secret"],
    [["--forward-to", "http://localhost:4242", "--retries", "-1"], "--retries takes a whole number from 0 to 10"],
    [["--forward-to", "http://localhost:4242", "--interval", "soon"], "--interval takes a number of seconds from 0.1 to 86400"],
    [["--forward-to", "http://localhost:4242", "--interval", "0"], "--interval takes a number of seconds from 0.1 to 86400"],
  ])("exits 2 for %j, asking the API nothing", async (flags, message) => {
    const api = eventsApi();

    const result = await runCli(["listen", ...flags], { env: stubEnv, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringContaining(message) });
    expect(api.queries).toEqual([]);
  });
});

describe("mailroom listen's signing secret", () => {
  it("refuses a MAILROOM_WEBHOOK_SECRET that is not whsec_ and base64 of 24 bytes or more, naming the variable and not the secret", async () => {
    const api = eventsApi();

    const result = await runCli(["listen", "--forward-to", "http://localhost:4242"], { env: { ...stubEnv, MAILROOM_WEBHOOK_SECRET: "whsec_abc" }, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: expect.stringMatching(/^MAILROOM_WEBHOOK_SECRET must hold a Standard Webhooks secret/) });
    expect(result.stderr).not.toContain("whsec_abc");
    expect(api.queries).toEqual([]);
  });

  it("signs with a secret as Mailroom's endpoints have them: the base64 of 32 bytes, padded", async () => {
    const secret = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
    const api = eventsApi();
    const receiver = await startReceiver(secret);
    const { stop } = await startListen(["--forward-to", receiver.url], { env: { ...stubEnv, MAILROOM_WEBHOOK_SECRET: secret }, fetch: api.fetch });
    const event = anEvent("message.delivered");
    api.add(event);
    await eventually(() => expect(receiver.deliveries).toHaveLength(1));
    await stop();

    expect(receiver.deliveries[0]?.verified).toEqual(event);
  });
});

describe("mailroom listen against the real server", () => {
  let server: TestServer;
  let env: Record<string, string>;
  let mailroom: FileServer["mailroom"];
  useTestServer((started) => ({ server, env, mailroom } = started));

  it("forwards what the sandbox pipeline does to a message, as it happens", async () => {
    const receiver = await startReceiver(SECRET);
    const { stop } = await startListen(["--forward-to", receiver.url, "--secret", SECRET], { env });

    const { id } = await mailroom.send({ to: "opened@simulator.test" });
    server.testApp.clock.advance(1_000);
    await server.testApp.drain();
    const { data } = await mailroom.get<PageBody<Event>>(`/v1/messages/${id}/events`);
    await eventually(() => expect(receiver.deliveries).toHaveLength(data.length));
    const { code } = await stop();

    expect(code).toBe(0);
    expect(receiver.deliveries.map((delivery) => delivery.verified)).toEqual(data);
    expect(data.map((event) => event.type)).toEqual(["message.queued", "message.delivered", "message.opened", "message.opened"]);
  });
});
