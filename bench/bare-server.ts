/**
 * The baseline for bench/accept.ts: a bare Fastify 5 app with one route that parses the same
 * JSON body as `POST /v1/messages` and answers 202 with a small JSON document. No validation,
 * no database, no logging. Runs in its own process (so the load generator does not share its
 * event loop) and prints `listening <port>` on stdout once it accepts connections.
 *
 *   node --import tsx bench/bare-server.ts [port]
 */
import Fastify from "fastify";

const port = Number(process.argv[2] ?? process.env.PORT ?? 0);
const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 });

let accepted = 0;
app.post("/v1/messages", async (req, reply) => {
  const body = req.body as { to?: unknown } | undefined;
  if (!body || typeof body !== "object") return reply.code(400).send({ error: "bad body" });
  accepted++;
  return reply.code(202).send({ id: `msg_${accepted}`, object: "message", status: "queued" });
});

const address = await app.listen({ host: "127.0.0.1", port });
console.log(`listening ${new URL(address).port}`);
const stop = () => void app.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
