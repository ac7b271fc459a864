import { execFileSync, spawn } from "node:child_process";
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Event, Message } from "mailroom";
import { startTestServer, type TestServer } from "../../test/helpers/http-server.js";
import { BIN, FROM, REPO, api, cliEnv, ensureBuilt, eventually, spawnCli, startWebhookReceiver } from "./helpers.js";

// The built binary as a user runs it: a real process, real signals, stdout a pipe (so JSON).
let server: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  ensureBuilt();
  server = await startTestServer();
  env = cliEnv(server);
});
afterAll(async () => server?.close());

describe("the mailroom binary", () => {
  it("sends a message: exit 0 and the accepted message as JSON on stdout", async () => {
    const { code, stdout, stderr } = await spawnCli(["send", "--from", FROM, "--to", "ada@example.com", "--subject", "From a process", "--text", "Hi"], env).exited;

    expect(code, stderr).toBe(0);
    const message = JSON.parse(stdout) as Message;
    expect(message).toMatchObject({ object: "message", status: "queued", subject: "From a process" });
    expect(await api(server).get(`/v1/messages/${message.id}`)).toMatchObject({ id: message.id });
  });

  it("exits 2 on a usage error, with the error on stderr and nothing on stdout", async () => {
    const { code, stdout, stderr } = await spawnCli(["send", "--subject", "Hi", "--text", "Hi"], env).exited;

    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(JSON.parse(stderr)).toMatchObject({ error: "usage", message: expect.stringContaining("Missing required argument: to") });
  });

  it("exits 1 on an API error, with the problem on stderr", async () => {
    const { code, stdout, stderr } = await spawnCli(["messages", "get", "msg_01jc3v6q9k2m8r4t7w0y5z1b3d"], env).exited;

    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(JSON.parse(stderr)).toMatchObject({ status: 404, code: "not_found" });
  });

  it("refuses to delete without --yes where stdin is no terminal: exit 2, the template still there", async () => {
    const created = spawnCli(["templates", "create", "--slug", "kept-by-script", "--name", "Kept", "--subject", "Hi", "--html", "<p>Hi</p>"], env);
    expect((await created.exited).code).toBe(0);

    const { code, stdout, stderr } = await spawnCli(["templates", "delete", "kept-by-script"], env).exited;

    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(JSON.parse(stderr)).toEqual({ error: "usage", message: "templates delete deletes template kept-by-script and there is no terminal to confirm on: pass --yes." });
    expect(await api(server).get("/v1/templates/kept-by-script")).toMatchObject({ slug: "kept-by-script" });
  });

  // A real terminal for the binary, from util-linux's `script` (Linux): the question, and the answer read from it.
  it.skipIf(!hasLinuxScript())("asks at a terminal and acts only on y", async () => {
    const created = spawnCli(["templates", "create", "--slug", "asked-first", "--name", "Asked", "--subject", "Hi", "--html", "<p>Hi</p>"], env);
    expect((await created.exited).code).toBe(0);

    const declined = await atTerminal(["templates", "delete", "asked-first"], "n\n");
    expect(declined.code).toBe(1);
    expect(declined.output).toContain("Delete template asked-first? Messages already sent keep their content; this cannot be undone. [y/N] Nothing deleted.");
    expect(await api(server).get("/v1/templates/asked-first")).toMatchObject({ slug: "asked-first" });

    const confirmed = await atTerminal(["templates", "delete", "asked-first"], "y\n");
    expect(confirmed.code, confirmed.output).toBe(0);
    expect(confirmed.output).toContain("Deleted ");
    await expect(api(server).get("/v1/templates/asked-first")).rejects.toThrow(/404/);
  });

  /** Runs the binary with stdin, stdout and stderr on a pseudo-terminal, typing `typed`; answers its exit code and all it printed. */
  async function atTerminal(argv: string[], typed: string): Promise<{ code: number | null; output: string }> {
    const command = [process.execPath, BIN, ...argv].map((word) => `'${word}'`).join(" ");
    const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: REPO, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stdin.end(typed);
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    return { code, output };
  }

  /** A server that takes each connection and reads the request, but never answers: a command waits on it. */
  async function silentServer() {
    const connections: Socket[] = [];
    let received = "";
    const silent = createNetServer((socket) => {
      connections.push(socket);
      socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk));
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    return {
      url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      /** The request's head once it has all come, else undefined. */
      head: () => (received.includes("\r\n\r\n") ? received.slice(0, received.indexOf("\r\n\r\n")) : undefined),
      close: async () => {
        for (const socket of connections) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      },
    };
  }

  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("ends a command waiting for an answer at once on %s, with exit %i as shells report it", async (signal, status) => {
    const silent = await silentServer();
    try {
      const command = spawnCli(["workspace", "get"], { ...env, MAILROOM_BASE_URL: silent.url });
      await eventually(() => expect(silent.head()).toBeDefined());

      const sentAt = Date.now();
      command.child.kill(signal);
      const { code, stderr } = await command.exited;

      expect(code).toBe(status);
      expect(Date.now() - sentAt).toBeLessThan(2_000);
      // A read left unanswered changed nothing: there is nothing to say.
      expect(stderr).toBe("");
    } finally {
      await silent.close();
    }
  });

  describe("stopped while a POST awaits its answer", () => {
    const send = ["send", "--from", FROM, "--to", "ada@example.com", "--subject", "Stopped", "--text", "Hi"];

    it("says in JSON, on SIGINT, that the send may have run and under which Idempotency-Key to run it again, and exits 130 at once", async () => {
      const silent = await silentServer();
      try {
        const command = spawnCli(send, { ...env, MAILROOM_BASE_URL: silent.url });
        await eventually(() => expect(silent.head()).toBeDefined());
        const key = /^idempotency-key: (.+)$/im.exec(silent.head() ?? "")?.[1];
        expect(key).toMatch(/^[0-9a-f-]{36}$/);

        const sentAt = Date.now();
        command.child.kill("SIGINT");
        const { code, stdout, stderr } = await command.exited;

        expect(code).toBe(130);
        expect(Date.now() - sentAt).toBeLessThan(2_000);
        expect(stdout).toBe("");
        expect(JSON.parse(stderr)).toEqual({ error: "interrupted", message: "Interrupted before the server answered: the request may have been carried out all the same.", idempotency_key: key });
      } finally {
        await silent.close();
      }
    });

    it("says it in words with --no-json, on SIGTERM, quoting a key of the user's own as the shell reads it back, and exits 143", async () => {
      const silent = await silentServer();
      try {
        const command = spawnCli([...send, "--no-json", "--idempotency-key", "order 1234"], { ...env, MAILROOM_BASE_URL: silent.url });
        await eventually(() => expect(silent.head()).toMatch(/^idempotency-key: order 1234$/im));

        command.child.kill("SIGTERM");
        const { code, stdout, stderr } = await command.exited;

        expect(code).toBe(143);
        expect(stdout).toBe("");
        expect(stderr).toBe(
          "Interrupted before the server answered. It may have been carried out all the same; to try again without doing it twice, run the same command with --idempotency-key 'order 1234'\n",
        );
      } finally {
        await silent.close();
      }
    });
  });

  it("follows events with events tail and stops cleanly, exit 0, on SIGINT", async () => {
    const { id } = await api(server).send({ to: "delivered@simulator.test", tags: ["tail-process"] });
    const tail = spawnCli(["events", "tail", "--since", "1h", "--interval", "0.1"], env);

    await eventually(() => expect(tail.stdout()).toContain(id));
    tail.child.kill("SIGINT");
    const { code, signal, stdout, stderr } = await tail.exited;

    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    const events = stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Event);
    expect(events.filter((event) => event.tags.includes("tail-process")).map((event) => [event.type, event.message_id])).toEqual([["message.queued", id]]);
  });

  // As `mailroom … | head -1`: the reader takes what it wants and closes the pipe.
  it("stops quietly, exit 0, when the reader of events tail's output closes the pipe", async () => {
    await api(server).send({ to: "delivered@simulator.test", tags: ["tail-epipe"] });
    const tail = spawnCli(["events", "tail", "--since", "1h", "--interval", "0.1"], env);
    await eventually(() => expect(tail.stdout()).toContain("\n"));
    tail.child.stdout?.destroy();
    // The next event is the next write, into the closed pipe.
    await api(server).send({ to: "delivered@simulator.test", tags: ["tail-epipe"] });
    const { code, signal, stderr } = await tail.exited;

    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
  });

  it("stops quietly, exit 0, when the reader closes the pipe before a long output is written", async () => {
    // 30 days by the hour: some 720 buckets, far more than a pipe holds at once.
    const metrics = spawnCli(["metrics", "get", "--granularity", "hour", "--from", "30d"], env);
    metrics.child.stdout?.once("data", () => metrics.child.stdout?.destroy());
    const { code, signal, stderr } = await metrics.exited;

    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
  });

  it("forwards events with listen, signed with the secret it prints, and stops cleanly, exit 0, on SIGINT", async () => {
    let secret = "";
    // Until the test has read the secret, deliveries fail to verify and are refused: listen retries them.
    const receiver = await startWebhookReceiver(() => secret, (delivery) => (typeof delivery.verified === "string" ? 400 : 204));
    try {
      const { id } = await api(server).send({ to: "delivered@simulator.test", tags: ["listen-process"] });
      const listen = spawnCli(["listen", "--forward-to", receiver.url, "--since", "1h", "--interval", "0.1"], env);
      await eventually(() => expect(listen.stderr()).toMatch(/^Signing secret: whsec_/m));
      secret = /^Signing secret: (\S+)$/m.exec(listen.stderr())?.[1] ?? "";

      await eventually(() => expect(receiver.deliveries.map((delivery) => (delivery.verified as Event).message_id)).toContain(id));
      listen.child.kill("SIGINT");
      const { code, signal, stdout, stderr } = await listen.exited;

      expect({ code, signal }).toEqual({ code: 0, signal: null });
      expect(stderr).toMatch(/\nStopped: \d+ events? forwarded, 0 not accepted by the receiver\.\n$/);
      const forwarded = stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as { id: string; status: number; ok: boolean });
      const delivered = receiver.deliveries.find((delivery) => (delivery.verified as Event).message_id === id);
      expect(forwarded).toContainEqual(expect.objectContaining({ id: delivered?.headers["webhook-id"], status: 204, ok: true }));
    } finally {
      await receiver.close();
    }
  });
});

function hasLinuxScript(): boolean {
  if (process.platform !== "linux") return false;
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
