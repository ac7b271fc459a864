import { describe, expect, it } from "vitest";
import type { Domain, InboundMessage, Message } from "mailroom";
import type { TestServer } from "../../test/helpers/http-server.js";
import { FROM, problemOf, runCli, useTestServer } from "./helpers.js";

/*
 * The tracking and reply commands against the real server (SQLite, the sandbox simulator), in
 * process: what the flags do to what is stored, and the replies the simulator makes.
 */
let server: TestServer;
let env: Record<string, string>;
useTestServer((started) => ({ server, env } = started));

const send = (...flags: string[]) => runCli(["send", "--from", FROM, "--subject", "Welcome", "--html", '<p><a href="https://acme.example/start">Start</a></p>', ...flags], { env });

describe("mailroom send --track-…", () => {
  it("stores what the message tracks, and the recipients' first open and click once the simulator delivers", async () => {
    const sent = await send("--to", "clicked@simulator.test", "--track-opens", "--track-clicks", "--no-track-replies");
    expect(sent.code, sent.stderr).toBe(0);
    const { id, tracking } = sent.json<Message>();
    expect(tracking).toEqual({ opens: true, clicks: true, replies: false, unsubscribe: false });
    await server.testApp.drain();

    const shown = await runCli(["messages", "get", id], { env, tty: true });

    expect(shown.stdout).toMatch(/^tracking\s+opens, clicks$/m);
    expect(shown.stdout).toMatch(/^clicked@simulator\.test\s+to\s+delivered\s+opened, clicked/m);
  });
});

describe("mailroom messages replies and mailroom inbound get", () => {
  it("lists the simulator's reply to a message and shows it", async () => {
    const sent = await send("--to", "replied@simulator.test", "--track-replies");
    const { id } = sent.json<Message>();
    await server.testApp.drain();

    const replies = await runCli(["messages", "replies", id], { env });

    expect(replies.code, replies.stderr).toBe(0);
    const [reply] = replies.json<{ data: InboundMessage[] }>().data;
    expect(reply).toMatchObject({ message_id: id, recipient: "replied@simulator.test", simulated: true });
    const shown = await runCli(["inbound", "get", reply?.id as string], { env, tty: true });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^from\s+.*replied@simulator\.test/m);
    expect(shown.stdout).toMatch(/^subject\s+Re: Welcome$/m);
  });

  it("exits 1 with not_found for an inbound id that does not exist", async () => {
    const result = await runCli(["inbound", "get", "inb_01jd3k8m2q5v7w9x1y3z5a7b9c"], { env });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 404 });
  });
});

describe("mailroom domains update and workspace update --track-…", () => {
  it("stores a domain's tracking settings and tracking domain, and puts them back on the defaults", async () => {
    const created = (await runCli(["domains", "create", "--name", "cli-tracking.example"], { env })).json<Domain>();

    const updated = await runCli(["domains", "update", created.id, "--track-opens", "--no-track-clicks", "--tracking-domain", "track.cli-tracking.example"], { env });

    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.json<Domain>()).toMatchObject({ track_opens: true, track_clicks: false, tracking_domain: "track.cli-tracking.example" });
    expect(updated.json<Domain>().records).toContainEqual(expect.objectContaining({ purpose: "tracking", type: "CNAME" }));
    const reset = await runCli(["domains", "update", created.id, "--track-opens-default", "--no-tracking-domain"], { env });
    expect(reset.json<Domain>()).toMatchObject({ track_opens: null, track_clicks: false, tracking_domain: null });
  });

  it("sets the workspace's tracking defaults, which a message that does not say then follows", async () => {
    const updated = await runCli(["workspace", "update", "--track-opens", "--unsubscribe"], { env });
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.json<{ tracking: unknown }>().tracking).toEqual({ opens: true, clicks: false, replies: false, unsubscribe: true });

    const sent = await send("--to", "delivered@simulator.test");

    expect(sent.json<Message>().tracking).toEqual({ opens: true, clicks: false, replies: false, unsubscribe: true });
    await runCli(["workspace", "update", "--no-track-opens", "--no-unsubscribe"], { env });
  });
});
