import type { Argv } from "yargs";
import type { CreateApiKeyParams } from "mailroom";
import type { Args, Noun } from "../command.js";
import { UsageError, definedOnly, listOrNone, optionalString, overlapSecondsOf, requiredString } from "../command.js";
import { listFlags, listQuery, printList } from "../list.js";
import { parseInstant, refuseRelativeWithKey } from "../time.js";
import { apiKeyColumns, apiKeySecretHint, renderApiKey } from "./render.js";
import { confirm, withYes } from "../confirm.js";

/** The key's `restrictions`, one comma-separated flag each (ApiKeyRestrictionsInput). */
const RESTRICTION_FLAGS = [
  { flag: "allowed-ips", field: "allowed_ips", describe: "Addresses or CIDR ranges it may be used from" },
  { flag: "sender-domains", field: "sender_domains", describe: "Domains it may send from (sending_access keys only)" },
  { flag: "recipient-domains", field: "recipient_domains", describe: "Domains it may send to (sending_access keys only)" },
] as const;

/** The restriction flags by name; the --no- form of each lifts it, as `none` does (listOrNone). */
const RESTRICTION_NAMES = RESTRICTION_FLAGS.map(({ flag }) => flag);

/** Adds the restriction flags; `suffix` ends each description (how to lift one, on update). */
function restrictionFlags(yargs: Argv, suffix = ""): Argv {
  return RESTRICTION_FLAGS.reduce((chain, { flag, describe }) => chain.option(flag, { type: "string", describe: `${describe}, comma-separated${suffix}` }), yargs).group(
    RESTRICTION_NAMES,
    "Restrictions:",
  );
}

/** The restrictions given (null for `none`, which lifts one); undefined when no flag is, so that nothing is sent. */
function restrictionsOf(args: Args): CreateApiKeyParams["restrictions"] {
  const restrictions = Object.fromEntries(RESTRICTION_FLAGS.map(({ flag, field }) => [field, listOrNone(args, flag)]).filter(([, value]) => value !== undefined));
  return Object.keys(restrictions).length > 0 ? restrictions : undefined;
}

export const apiKeys: Noun = {
  name: "api-keys",
  describe: "Credentials for the API (secrets are shown once)",
  commands: [
    {
      command: "create",
      describe: "Create a key in the calling key's environment; prints its secret once",
      operationId: "createApiKey",
      examples: [
        ['$0 api-keys create --name "Billing service" --permission sending_access', "A key that can only send"],
        ['$0 api-keys create --name CI --expires-at 30d --json | jq -r .secret', "A key for CI that expires in 30 days"],
        ['$0 api-keys create --name Web --permission sending_access --sender-domains acme.example --allowed-ips 203.0.113.0/24', "A key that sends only from acme.example, only from one network"],
      ],
      noForms: RESTRICTION_NAMES,
      builder: (yargs) =>
        restrictionFlags(
          yargs
            .option("name", { type: "string", describe: "What the key is for", demandOption: "Give the key a --name." })
            .option("permission", { type: "string", choices: ["full_access", "sending_access"], describe: "What it may do (default full_access)" })
            .option("expires-at", { type: "string", describe: "When it stops working: RFC 3339 or a duration from now (30d)" })
            .option("idempotency-key", { type: "string", describe: "Make retries of this call safe" }),
        ),
      async run({ client, output }, args) {
        refuseRelativeWithKey(args, ["expires-at"]);
        const expiresAt = optionalString(args, "expires-at");
        const body = {
          name: requiredString(args, "name"),
          ...definedOnly({
            permission: optionalString(args, "permission") as "full_access" | "sending_access" | undefined,
            expires_at: expiresAt && parseInstant(expiresAt, "expires-at"),
            restrictions: restrictionsOf(args),
          }),
        };
        const key = await client().apiKeys.create(body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(key, () => renderApiKey(key), () => apiKeySecretHint(key));
      },
    },
    {
      command: "list",
      describe: "List the environment's keys (without secrets)",
      operationId: "listApiKeys",
      examples: [["$0 api-keys list", "Every key, with when it was last used"]],
      builder: (yargs) => listFlags(yargs, { createdRange: false }),
      async run(context, args) {
        await printList(context, args, context.client().apiKeys.list(listQuery(args, { createdRange: false })), apiKeyColumns);
      },
    },
    {
      command: "get <api_key_id>",
      describe: "Show a key",
      operationId: "getApiKey",
      examples: [["$0 api-keys get key_01jc3v6q9k2m8r4t7w0y5z1b3d", "Show one key"]],
      async run({ client, output }, args) {
        const key = await client().apiKeys.get(requiredString(args, "api_key_id"));
        output.result(key, () => renderApiKey(key), () => apiKeySecretHint(key));
      },
    },
    {
      command: "update <api_key_id>",
      describe: "Rename a key or change its restrictions; its secret, permission and expiry stay",
      operationId: "updateApiKey",
      examples: [
        ["$0 api-keys update key_01jc3v6q9k2m8r4t7w0y5z1b3d --sender-domains acme.example,mail.acme.example", "Let the key send only from these domains"],
        ["$0 api-keys update key_01jc3v6q9k2m8r4t7w0y5z1b3d --allowed-ips none", "Let the key be used from anywhere again"],
        ['$0 api-keys update key_01jc3v6q9k2m8r4t7w0y5z1b3d --name "Billing service (old)"', "Rename the key"],
      ],
      noForms: RESTRICTION_NAMES,
      builder: (yargs) => restrictionFlags(yargs.option("name", { type: "string", describe: "What the key is for" }), "; none lifts the limit"),
      async run({ client, output }, args) {
        const body = definedOnly({ name: optionalString(args, "name"), restrictions: restrictionsOf(args) });
        if (Object.keys(body).length === 0) throw new UsageError("Nothing to update: give --name, --allowed-ips, --sender-domains or --recipient-domains (a list, or none to lift the limit).");
        const key = await client().apiKeys.update(requiredString(args, "api_key_id"), body);
        output.result(key, () => renderApiKey(key), () => apiKeySecretHint(key));
      },
    },
    {
      command: "revoke <api_key_id>",
      describe: "Revoke a key: it stops working at once",
      operationId: "revokeApiKey",
      examples: [["$0 api-keys revoke key_01jc3v6q9k2m8r4t7w0y5z1b3d", "Revoke a leaked key"], ["$0 api-keys revoke key_01jc3v6q9k2m8r4t7w0y5z1b3d --yes", "The same without asking, as a script must"]],
      builder: withYes,
      async run(context, args) {
        const { client, output } = context;
        const id = requiredString(args, "api_key_id");
        await confirm(context, args, { command: "api-keys revoke", verb: "revoke", what: `API key ${id}`, consequence: "It stops working at once; this cannot be undone." });
        const key = await client().apiKeys.revoke(id);
        output.result(key, () => `${renderApiKey(key)}\n\nRevoked.`);
      },
    },
    {
      command: "rotate <api_key_id>",
      describe: "Issue a new secret; the old one keeps working for the overlap",
      operationId: "rotateApiKey",
      examples: [
        ["$0 api-keys rotate key_01jc3v6q9k2m8r4t7w0y5z1b3d", "New secret; the old one works for 24 h more"],
        ["$0 api-keys rotate key_01jc3v6q9k2m8r4t7w0y5z1b3d --overlap-seconds 0", "New secret; the old one stops now"],
      ],
      builder: (yargs) =>
        yargs
          .option("overlap-seconds", { type: "string", describe: "How long the old secret keeps working (default 86400; 0 allowed)" })
          .option("idempotency-key", { type: "string", describe: "Make retries of this call safe" }),
      async run({ client, output }, args) {
        const overlap = overlapSecondsOf(args);
        const key = await client().apiKeys.rotate(
          requiredString(args, "api_key_id"),
          definedOnly({ overlap_seconds: overlap }),
          definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }),
        );
        output.result(key, () => renderApiKey(key), () => apiKeySecretHint(key));
      },
    },
  ],
};
