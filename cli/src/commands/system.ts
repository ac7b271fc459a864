import type { Noun } from "../command.js";

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
        const health = await client().system.getHealth();
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
        const readiness = await client().system.getReadiness();
        output.result(readiness, () => readiness.status);
      },
    },
  ],
};
