import type { Domain, DomainStatus, UpdateDomainParams } from "mailroom";
import type { Args, Noun } from "../command.js";
import { UsageError, definedOnly, optionalString, requiredString } from "../command.js";
import { listFlags, listQuery, printList } from "../list.js";
import { fields, table } from "../output.js";
import { confirm, withYes } from "../confirm.js";

const idempotencyFlag = { type: "string", describe: "Make retries of this call safe" } as const;
/** The contract's `DomainStatus` values; `satisfies` keeps the list to values it has. */
const STATUSES = ["pending", "verified", "temporary_failure", "failed"] as const satisfies readonly DomainStatus[];

const domainColumns = {
  headers: ["NAME", "STATUS", "ID"],
  row: (domain: Domain) => [domain.name, domain.status, domain.id],
};

/**
 * The domain and the DNS records to publish, as a table people copy from. VALUE comes last and is
 * never shortened: a DKIM key is hundreds of characters, and a column after it would be pushed
 * off the screen.
 */
function renderDomain(domain: Domain): string {
  const summary = fields([
    ["id", domain.id],
    ["name", domain.name],
    ["status", domain.status],
    ["return_path_domain", domain.return_path_domain],
    ["dkim", domain.dkim.map((key) => `${key.selector} (${key.algorithm})`).join(", ")],
    ["track_opens", trackingDefault(domain.track_opens)],
    ["track_clicks", trackingDefault(domain.track_clicks)],
    ["tracking_domain", domain.tracking_domain ?? "(none: the server's own URL)"],
    ["created_at", domain.created_at],
    ["verified_at", domain.verified_at],
    ["last_checked_at", domain.last_checked_at ?? "never"],
    ...(domain.failing_since === null ? [] : ([["failing_since", domain.failing_since], ["grace_ends_at", domain.grace_ends_at ?? ""]] as Array<[string, string]>)),
    ["next_check_at", domain.next_check_at ?? "(none: checked when you run domains verify)"],
    ...(domain.dkim_rotation === null ? [] : ([["dkim_rotation", `${domain.dkim_rotation.keys.map((key) => key.selector).join(", ")} (since ${domain.dkim_rotation.started_at}; not signing yet)`]] as Array<[string, string]>)),
  ]);
  const records = table(
    ["TYPE", "NAME", "PRIORITY", "STATUS", "VALUE"],
    domain.records.map((record) => [record.type, record.name, record.priority === null ? "" : String(record.priority), record.required ? record.status : record.purpose === "dkim_next" ? `${record.status} (new key)` : `${record.status} (optional)`, record.value]),
  );
  // What DNS answered instead is what tells a person how to fix a mismatch.
  const mismatches = domain.records
    .filter((record) => record.status === "mismatch")
    .map((record) => `${record.type} ${record.name} has ${record.found.length > 0 ? record.found.map((found) => JSON.stringify(found)).join(", ") : "nothing"} instead.`);
  return [summary, records, ...(mismatches.length > 0 ? [mismatches.join("\n")] : [])].join("\n\n");
}

/** A domain's tracking default as people read it: null follows the workspace. */
const trackingDefault = (value: boolean | null) => (value === null ? "workspace default" : value ? "on" : "off");

/**
 * A tri-state default from `--track-opens`, `--no-track-opens` and `--track-opens-default`
 * (null: follow the workspace); undefined when none is given.
 */
function trackingSetting(args: Args, flag: "track-opens" | "track-clicks"): boolean | null | undefined {
  if (args[`${flag}-default`] === true) {
    if (typeof args[flag] === "boolean") throw new UsageError(`--${flag}-default follows the workspace: leave out --${flag} / --no-${flag}.`);
    return null;
  }
  return typeof args[flag] === "boolean" ? args[flag] : undefined;
}

/** --tracking-domain HOST, or --no-tracking-domain (false) for none (null). */
function trackingDomain(args: Args): string | null | undefined {
  return args["tracking-domain"] === false ? null : optionalString(args, "tracking-domain");
}

/** The closing line after a verification: done, or what is still missing and what that means for live mail. */
function verdict(domain: Domain): string {
  if (domain.status === "verified") return "Verified: live mail may be sent from this domain.";
  const waiting = domain.records.filter((record) => record.required && record.status !== "verified").length;
  const missing = `${waiting} required record${waiting === 1 ? "" : "s"} not found as published`;
  if (domain.status === "temporary_failure") return `Records missing since ${domain.failing_since}: ${missing}. Live mail is still sent until the grace period ends at ${domain.grace_ends_at}, then refused.`;
  if (domain.status === "failed") return `Failed: ${missing}, past the grace period. Live mail from this domain is refused.`;
  return `Still pending: ${missing}.`;
}

/** The hint after a verification that did not verify: wait for DNS, or publish what went missing. */
function afterVerify(domain: Domain): string | undefined {
  if (domain.status === "verified") return undefined;
  if (domain.status === "pending") return `DNS changes can take a while to show; verifying again is harmless: mailroom domains verify ${domain.id}`;
  return publishThenVerify("the missing records again", domain);
}

/** The hint after an answer with DNS records to publish: which ones, and the command that checks them. */
const publishThenVerify = (records: string, domain: Domain) => `Publish ${records}, then run: mailroom domains verify ${domain.id}`;

export const domains: Noun = {
  name: "domains",
  describe: "The domains the workspace sends from: DKIM keys, DNS records, verification",
  commands: [
    {
      command: "create",
      describe: "Add a sending domain; prints the DNS records to publish",
      operationId: "createDomain",
      examples: [
        ["$0 domains create --name acme.example", "Add a domain and see the DNS records to publish"],
        ["$0 domains create --name acme.example --return-path-subdomain mail", "Bounces come back to mail.acme.example"],
      ],
      builder: (yargs) =>
        yargs
          .option("name", { type: "string", describe: "The domain mail is sent from (acme.example for hello@acme.example)", demandOption: "Give the domain with --name." })
          .option("return-path-subdomain", { type: "string", describe: "The label bounces come back to under the domain (default bounces)" })
          .option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        const body = { name: requiredString(args, "name"), ...definedOnly({ return_path_subdomain: optionalString(args, "return-path-subdomain") }) };
        const domain = await client().domains.create(body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(domain, () => renderDomain(domain), () => publishThenVerify("these records", domain));
      },
    },
    {
      command: "list",
      describe: "List the workspace's domains, newest first",
      operationId: "listDomains",
      examples: [
        ["$0 domains list", "Every domain and whether it is verified"],
        ["$0 domains list --status temporary_failure", "The domains whose DNS records went missing, still sending until their grace period ends"],
      ],
      builder: (yargs) => listFlags(yargs, { createdRange: false }).option("status", { type: "string", choices: STATUSES, describe: "Only domains in this status" }),
      async run(context, args) {
        const filters = definedOnly({ status: optionalString(args, "status") as DomainStatus | undefined });
        await printList(context, args, context.client().domains.list({ ...listQuery(args, { createdRange: false }), ...filters }), domainColumns);
      },
    },
    {
      command: "get <domain_id>",
      describe: "Show a domain and its DNS records, as of the last verification",
      operationId: "getDomain",
      examples: [["$0 domains get dom_01jd3k8m2q5v7w9x1y3z5a7b9c", "The records to publish for one domain"]],
      async run({ client, output }, args) {
        const domain = await client().domains.get(requiredString(args, "domain_id"));
        output.result(domain, () => renderDomain(domain));
      },
    },
    {
      command: "update <domain_id>",
      describe: "Change a domain's tracking defaults and tracking domain",
      operationId: "updateDomain",
      examples: [
        ["$0 domains update dom_01jd3k8m2q5v7w9x1y3z5a7b9c --track-clicks", "Track clicks by default"],
        ["$0 domains update dom_01jd3k8m2q5v7w9x1y3z5a7b9c --tracking-domain track.acme.example", "Serve tracking links from a host name of the domain"],
        ["$0 domains update dom_01jd3k8m2q5v7w9x1y3z5a7b9c --track-opens-default --no-tracking-domain", "Back to the workspace's default for opens, and the server's own URL"],
      ],
      noForms: ["tracking-domain"],
      builder: (yargs) =>
        yargs
          .option("track-opens", { type: "boolean", describe: "Track opens of mail from this domain by default; --no-track-opens for off" })
          .option("track-opens-default", { type: "boolean", describe: "Follow the workspace's default for opens" })
          .option("track-clicks", { type: "boolean", describe: "Track clicks in mail from this domain by default; --no-track-clicks for off" })
          .option("track-clicks-default", { type: "boolean", describe: "Follow the workspace's default for clicks" })
          .option("tracking-domain", { type: "string", describe: "A host name under the domain serving its tracking links (publish the tracking CNAME it adds); --no-tracking-domain for none" }),
      async run({ client, output }, args) {
        const body: UpdateDomainParams = definedOnly({
          track_opens: trackingSetting(args, "track-opens"),
          track_clicks: trackingSetting(args, "track-clicks"),
          tracking_domain: trackingDomain(args),
        });
        if (Object.keys(body).length === 0) {
          throw new UsageError("Nothing to update: give --track-opens, --track-clicks (each with --no- or -default forms) or --tracking-domain (or --no-tracking-domain).");
        }
        const domain = await client().domains.update(requiredString(args, "domain_id"), body);
        output.result(
          domain,
          () => renderDomain(domain),
          () => {
            const cname = domain.records.find((record) => record.purpose === "tracking");
            return cname && cname.status !== "verified" ? publishThenVerify(`the tracking record (${cname.type} ${cname.name} -> ${cname.value})`, domain) : undefined;
          },
        );
      },
    },
    {
      command: "delete <domain_id>",
      describe: "Remove a domain and its DKIM keys; live mail from it is refused from now on",
      operationId: "deleteDomain",
      examples: [["$0 domains delete dom_01jd3k8m2q5v7w9x1y3z5a7b9c", "Stop sending from a domain"], ["$0 domains delete dom_01jd3k8m2q5v7w9x1y3z5a7b9c --yes", "The same without asking, as a script must"]],
      builder: withYes,
      async run(context, args) {
        const { client, output } = context;
        const id = requiredString(args, "domain_id");
        await confirm(context, args, { command: "domains delete", verb: "delete", what: `domain ${id}`, consequence: "It can no longer send live mail and its DKIM keys are lost; this cannot be undone." });
        const deleted = await client().domains.delete(id);
        output.result(
          deleted,
          () => `Deleted ${deleted.id}.`,
          () => "Remove its DNS records once the mail it signed has been delivered.",
        );
      },
    },
    {
      command: "verify <domain_id>",
      describe: "Look the domain's DNS records up now and report each",
      operationId: "verifyDomain",
      examples: [
        ["$0 domains verify dom_01jd3k8m2q5v7w9x1y3z5a7b9c", "Check the records once published"],
        ["$0 domains verify dom_01jd3k8m2q5v7w9x1y3z5a7b9c --json | jq -e '.status == \"verified\"'", "Exit 0 only once verified, in a script"],
      ],
      builder: (yargs) => yargs.option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        const domain = await client().domains.verify(requiredString(args, "domain_id"), definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(domain, () => `${renderDomain(domain)}\n\n${verdict(domain)}`, () => afterVerify(domain));
      },
    },
    {
      command: "rotate-dkim <domain_id>",
      describe: "Make new DKIM keys; they take over once their records are published and verified",
      operationId: "rotateDomainDkim",
      examples: [["$0 domains rotate-dkim dom_01jd3k8m2q5v7w9x1y3z5a7b9c", "Start a key rotation"]],
      builder: (yargs) => yargs.option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        const domain = await client().domains.rotateDkim(requiredString(args, "domain_id"), definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(
          domain,
          () => renderDomain(domain),
          () =>
            `${publishThenVerify('the records marked "new key"', domain)}\n` +
            "Mail is signed with the current keys until every new record is found; keep the old records published for a week after that.",
        );
      },
    },
  ],
};
