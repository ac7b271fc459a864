import type { Mailroom } from "mailroom";
import type { Noun } from "../command.js";

/** A probe answers what it sees now: a 503 from a server still starting is the answer, not a reason to retry. */
export const probe = (client: Mailroom) => client.withOptions({ maxRetries: 0 });

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
      async run({ client, output }) {
        const health = await probe(client()).system.getHealth();
        output.result(health, () => health.status);
      },
    },
    {
      command: "get-readiness",
      aliases: ["ready"],
      describe: "Whether the server can take traffic (its database answers)",
      operationId: "getReadiness",
      examples: [["$0 system ready", "Can the server take traffic?"]],
      async run({ client, output }) {
        const readiness = await probe(client()).system.getReadiness();
        output.result(readiness, () => readiness.status);
      },
    },
  ],
};
