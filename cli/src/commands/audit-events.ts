import type { AuditEvent } from "mailroom";
import type { Noun } from "../command.js";
import { definedOnly, optionalString } from "../command.js";
import { listFlags, listQuery, printList } from "../list.js";
import { cell } from "../output.js";

const auditEventColumns = {
  headers: ["CREATED", "OPERATION", "ACTOR", "TARGET", "FIELDS", "IP"],
  // A target without an id (the API's null) is named by its kind, as `(workspace)`.
  row: (event: AuditEvent) => [event.created_at, event.operation, event.actor.id, event.target.id ?? `(${event.target.type})`, cell(event.fields), event.ip_address ?? ""],
};

export const auditEvents: Noun = {
  name: "audit-events",
  describe: "Who changed what: keys, webhook endpoints, domains, templates, members, settings",
  commands: [
    {
      command: "list",
      describe: "List the environment's audit events, newest first (a full_access key or an admin)",
      operationId: "listAuditEvents",
      examples: [
        ["$0 audit-events list --operation revokeApiKey --created-after 7d", "Who revoked keys this week"],
        ["$0 audit-events list --target key_01jc3v6q9k2m8r4t7w0y5z1b3d --all", "Every change to one key"],
        ["$0 audit-events list --actor usr_01jd3k8m2q5v7w9x1y3z5a7b9a", "What one member changed"],
      ],
      builder: (yargs) =>
        listFlags(yargs)
          .option("operation", { type: "string", describe: "Only changes made by this operation (e.g. revokeApiKey)" })
          .option("actor", { type: "string", alias: "actor-id", describe: "Only changes made by this API key (key_…) or member (usr_…)" })
          .option("target", { type: "string", alias: "target-id", describe: "Only changes to this object (e.g. a key's or a domain's id)" }),
      async run(context, args) {
        const filters = definedOnly({ operation: optionalString(args, "operation"), actor_id: optionalString(args, "actor"), target_id: optionalString(args, "target") });
        await printList(context, args, context.client().auditEvents.list({ ...listQuery(args), ...filters }), auditEventColumns);
      },
    },
  ],
};
