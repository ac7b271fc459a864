import { readEnvVar, Webhooks, type Event } from "mailroom";
import type { Args, Command, Context } from "../command.js";
import { UsageError, optionalString, requiredString, wholeNumber, wholeNumberDefault } from "../command.js";
import { EventTail, Polling, intervalFlag } from "../event-tail.js";
import { EVENT_TYPES, EVENT_TYPE_FLAG, eventTypeFlag, eventTypeList } from "../event-types.js";
import { Forwarder, isWebhookSecret, newWebhookSecret, type ForwardResult } from "../forwarder.js";
import { parsePastInstant } from "../time.js";

/** How long the receiver may take to answer one attempt; a breakpoint in it should not drop the event. */
const ATTEMPT_TIMEOUT_MS = 30_000;
/** The wait before the first retry of a failed forward (then 1 s, 2 s, …). */
const FIRST_BACKOFF_MS = 500;
/** Retries of a failed forward unless --retries says otherwise. */
const DEFAULT_RETRIES = 3;

/**
 * `mailroom listen`: this environment's events, forwarded to a local receiver as they happen, signed
 * as webhook deliveries are (like `stripe listen`). It polls the event list, so the receiver needs
 * no public address and no endpoint has to be registered.
 */
export const listen: Command = {
  command: "listen",
  describe: "Forward this environment's events to a local URL as signed webhook deliveries, until Ctrl-C",
  operationId: undefined,
  examples: [
    ["$0 listen --forward-to http://localhost:4242/webhooks", "Forward every new event; prints the signing secret to verify with"],
    ["MAILROOM_WEBHOOK_SECRET=whsec_… $0 listen --forward-to http://localhost:4242/webhooks --events message.delivered,message.bounced", "Two types, signed with your receiver's own secret"],
    ["$0 listen --forward-to http://localhost:4242/webhooks --since 1h", "Replay the last hour's events first, then follow new ones"],
  ],
  builder: (yargs) =>
    yargs
      .option("forward-to", { type: "string", describe: "The receiver's URL (http or https)", demandOption: "Give the receiver's URL with --forward-to." })
      .option(EVENT_TYPE_FLAG, eventTypeFlag("Only these event types (repeatable, or comma-separated); default all", { several: true }))
      .option("secret", { type: "string", describe: "Sign with this whsec_ secret (default: $MAILROOM_WEBHOOK_SECRET, else a new random one, printed at start); visible to other users in the process list, unlike the variable" })
      .option("since", { type: "string", describe: "First forward the events since then (10m, 1h, RFC 3339); default: only new ones" })
      .option("interval", intervalFlag(1, "Seconds between polls of the event list"))
      .option("retries", { ...wholeNumberDefault(DEFAULT_RETRIES), describe: "Retries of a forward the receiver fails (backoff 0.5 s, doubling, or the receiver's Retry-After up to 60 s)" }),
  run: listenAndForward,
};

async function listenAndForward({ client, output, io }: Context, args: Args): Promise<void> {
  const url = receiverUrl(requiredString(args, "forward-to"));
  const types = eventTypeList(args, EVENT_TYPES);
  const since = optionalString(args, "since");
  const startAt = since === undefined ? undefined : parsePastInstant(since, "since");
  const retries = wholeNumber(args.retries, "--retries", { min: 0, max: 10 });
  // From the environment too: a flag's value shows in the process list (ps) to every user of the machine.
  const fromFlag = args.secret !== undefined;
  const given = fromFlag ? optionalString(args, "secret") : readEnvVar(io.env, "MAILROOM_WEBHOOK_SECRET");
  // Checked before any event is taken: a typo fails here, not at the receiver. Never quoted: it is a secret.
  if (given !== undefined && !isWebhookSecret(given)) {
    throw new UsageError(`${fromFlag ? "--secret takes" : "MAILROOM_WEBHOOK_SECRET must hold"} a Standard Webhooks secret: whsec_ followed by the base64 of at least 24 bytes (as \`mailroom webhooks secret\` prints).`);
  }
  const secret = given ?? newWebhookSecret();
  const signer = new Webhooks();

  const intervalMs = (args.interval as number) * 1000;
  io.catchInterrupts?.();
  const polling = new Polling({ intervalMs, interrupted: io.interrupted, output, carryingOn: "still listening" });
  const mailroom = client();
  const tail = new EventTail(mailroom, types, startAt);
  if (startAt === undefined) await polling.throughOutages(() => tail.skipExisting());
  const forwarder = new Forwarder({ url, secret, signer, retries, backoffMs: FIRST_BACKOFF_MS, timeoutMs: ATTEMPT_TIMEOUT_MS });

  // The secret goes to stderr whatever the mode: the receiver cannot verify without it, and
  // stdout stays one JSON object per line for scripts.
  const filter = types ? types.join(", ") : "every event";
  io.stderr.write(`Forwarding ${filter} to ${url} (polling every ${intervalMs / 1000} s; Ctrl-C to stop).\n`);
  io.stderr.write(given === undefined ? `Signing secret: ${secret}\n` : fromFlag ? "Signing with the secret given (--secret).\n" : "Signing with the secret in MAILROOM_WEBHOOK_SECRET.\n");

  const abort = new AbortController();
  void io.interrupted.then(() => abort.abort(new Error("interrupted")));
  let forwarded = 0;
  let failed = 0;
  while (polling.running) {
    for (const event of (await polling.throughOutages(() => tail.poll())) ?? []) {
      let result: ForwardResult;
      try {
        result = await forwarder.forward(event.id, webhookPayload(event), abort.signal);
      } catch (error) {
        // Ctrl-C during a forward or its backoff: stop, with the event neither delivered nor reported.
        if (abort.signal.aborted) break;
        throw error;
      }
      forwarded++;
      if (!result.ok) failed++;
      output.line({ id: event.id, type: event.type, created_at: event.created_at, message_id: event.message_id, ...result }, () => renderForward(event, result));
    }
    await polling.pause();
  }
  io.stderr.write(`Stopped: ${forwarded} event${forwarded === 1 ? "" : "s"} forwarded, ${failed} not accepted by the receiver.\n`);
}

/**
 * The body of the delivery: the event object, exactly what a webhook endpoint receives for it (the
 * contract's `webhooks:` payloads are events), so a receiver tested with `listen` needs no change.
 */
function webhookPayload(event: Event): string {
  return JSON.stringify(event);
}

function receiverUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--forward-to takes a URL such as http://localhost:4242/webhooks; got "${value}".`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--forward-to takes an http or https URL; got "${value}".`);
  return url.href;
}

/** One line per forward: when, what, and how the receiver answered. */
function renderForward(event: Event, result: ForwardResult): string {
  const answer = result.status === null ? `no answer (${result.error ?? "unknown"})` : String(result.status);
  const tries = result.attempts > 1 ? `, ${result.attempts} attempts` : "";
  return `${event.created_at}  ${event.type.padEnd(20)}  ${event.id}  ${result.ok ? "→" : "✗"} ${answer}  ${result.duration_ms} ms${tries}`;
}
