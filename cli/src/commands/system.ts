import type { Mailroom } from "mailroom";
import type { Args, Noun } from "../command.js";
import { connectionOf, newClient } from "../connection.js";
import type { Io } from "../io.js";

/** A probe answers what it sees now: a 503 from a server still starting is the answer, not a reason to retry. */
export const probe = (client: Mailroom) => client.withOptions({ maxRetries: 0 });

/**
 * The probes need no key: they send a placeholder (the SDK's client insists on one), so that they
 * work before any key exists and a key set for other commands goes nowhere. As doctor's are.
 */
const probeClient = (args: Args, io: Io) => probe(newClient("none", connectionOf(args, io).baseUrl, io));

export const system: Noun = {
  name: "system",
  describe: "Liveness and readiness of the server",
  commands: [
    {
      command: "get-health",
      aliases: ["health"],
      describe: "Whether the server process is up",
      operationId: "getHealth",
      examples: [["$0 system health", "Is the server up?"]],
      async run({ output, io }, args) {
        const health = await probeClient(args, io).system.getHealth();
        output.result(health, () => health.status);
      },
    },
    {
      command: "get-readiness",
      aliases: ["ready"],
      describe: "Whether the server can take traffic (its database answers)",
      operationId: "getReadiness",
      examples: [["$0 system ready", "Can the server take traffic?"]],
      async run({ output, io }, args) {
        const readiness = await probeClient(args, io).system.getReadiness();
        output.result(readiness, () => readiness.status);
      },
    },
  ],
};
