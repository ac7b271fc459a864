import type { ListRequestLogsParams, RequestLog } from "mailroom";
import type { Noun } from "../command.js";
import { definedOnly, optionalString, requiredString } from "../command.js";
import { listFlags, listQuery, printList } from "../list.js";
import { cell, fields, problemLines } from "../output.js";

const METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"] as const;

const requestLogColumns = {
  headers: ["TIME", "METHOD", "PATH", "STATUS", "CODE", "MS", "CREDENTIAL", "REQUEST ID"],
  row: (log: RequestLog) => [log.created_at, log.method, cell(log.path, 50), String(log.status), log.error_code ?? "", String(log.duration_ms), log.credential.id, log.id],
};

/** The contract's pattern for `status`: checked here, so that a typo is a usage error (exit 2) rather than a round trip. */
function statusFilter(value: string): string {
  if (!/^[1-5]([0-9]{2}|xx)$/.test(value)) throw new Error(`--status takes a status (422) or a class (2xx, 3xx, 4xx, 5xx); got "${value}".`);
  return value;
}

/** A request: its fields, then, for a failed one, the problem it was answered with (as an error of the CLI's own is shown). */
function renderRequestLog(log: RequestLog): string {
  const details = fields([
    ["id", log.id],
    ["environment", log.environment],
    ["method", log.method],
    ["path", log.path],
    ["operation", log.operation],
    ["status", log.status],
    ["error_code", log.error_code],
    ["duration_ms", log.duration_ms],
    ["credential", `${log.credential.type} ${log.credential.id}`],
    ["ip_address", log.ip_address],
    ["user_agent", log.user_agent],
    ["idempotency_key", log.idempotency_key],
    // Only a request with an Idempotency-Key can be a replay.
    ["idempotent_replayed", log.idempotency_key === null && !log.idempotent_replayed ? undefined : log.idempotent_replayed ? "yes" : "no"],
    ["created_at", log.created_at],
  ]);
  const problem = log.error;
  if (!problem) return details;
  return `${details}\n\n${problemLines(`Answered ${problem.status} ${problem.code}`, problem).join("\n")}`;
}

/** `--method get` as GET. Anything but text (`--no-method`, false) is left for yargs and run.ts to refuse. */
const upperCase = (method: unknown) => (typeof method === "string" ? method.toUpperCase() : method);

export const requestLogs: Noun = {
  name: "request-logs",
  describe: "Every request this environment's credentials made to the API, and how it was answered",
  commands: [
    {
      command: "list",
      describe: "List the environment's requests, newest first (a full_access key or a developer)",
      operationId: "listRequestLogs",
      examples: [
        ["$0 request-logs list --status 4xx", "The requests that failed for the caller"],
        ["$0 request-logs list --operation createMessage --created-after 1h", "The sends of the last hour"],
        ["$0 request-logs list --credential-id key_01jc3v6q9k2m8r4t7w0y5z1b3d --method DELETE --all", "Everything one key deleted"],
      ],
      builder: (yargs) =>
        listFlags(yargs)
          .option("status", { type: "string", describe: "Only answers with this status (422) or in this class (4xx)", coerce: statusFilter })
          .option("method", { type: "string", choices: METHODS, describe: "Only requests with this HTTP method", coerce: upperCase })
          .option("operation", { type: "string", describe: "Only requests to this operation (e.g. createMessage)" })
          .option("credential-id", { type: "string", describe: "Only requests made with this API key (key_…) or by this member (usr_…)" }),
      async run(context, args) {
        const filters = definedOnly({
          status: optionalString(args, "status"),
          method: optionalString(args, "method") as ListRequestLogsParams["method"],
          operation: optionalString(args, "operation"),
          credential_id: optionalString(args, "credential-id"),
        });
        await printList(context, args, context.client().requestLogs.list({ ...listQuery(args), ...filters }), requestLogColumns);
      },
    },
    {
      command: "get <request_id>",
      describe: "Show one request, by the request id its answer carried",
      operationId: "getRequestLog",
      examples: [["$0 request-logs get req_01jd3k8m2q5v7w9x1y3z5a7b9c", "Look up the request id an error showed"]],
      async run({ client, output }, args) {
        const log = await client().requestLogs.get(requiredString(args, "request_id"));
        output.result(log, () => renderRequestLog(log));
      },
    },
  ],
};
