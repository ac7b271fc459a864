import { domainToASCII } from "node:url";
import { APIConnectionError, APIError, AuthenticationError, isSendableApiKey, MailroomError, PermissionDeniedError, type Domain, type Mailroom, type PagePromise, type Workspace } from "mailroom";
import type { Command } from "../command.js";
import { EXIT } from "../command.js";
import { NO_API_KEY_FIX, connectionOf, newClient, noAnswerFix } from "../connection.js";
import { probe } from "./system.js";

type Status = "pass" | "warn" | "fail" | "skip";

interface CheckResult {
  status: Status;
  detail: string;
  /** What to do about a warn or a fail. */
  fix?: string;
}

/** What the checks have found so far; a check records here what the checks after it build on. */
interface Findings {
  apiKey: string | undefined;
  /** The CLI's usual client, for a key, on the server chosen. */
  connect(apiKey: string): Mailroom;
  /** Set by `api_key` once the key is well-formed. */
  client?: Mailroom;
  serverUp: boolean;
  /** Set by `authentication` when the key may read the workspace (full access). */
  workspace?: Workspace;
}

interface Check {
  name: string;
  run(findings: Findings): Promise<CheckResult>;
}

const pass = (detail: string): CheckResult => ({ status: "pass", detail });
const warn = (detail: string, fix: string): CheckResult => ({ status: "warn", detail, fix });
const fail = (detail: string, fix: string): CheckResult => ({ status: "fail", detail, fix });
const skip = (detail: string): CheckResult => ({ status: "skip", detail });

type CheckRun = (findings: Findings) => Promise<CheckResult>;

/** A check that runs once `api_key` and `server` have passed, and is skipped otherwise. */
const withKeyAndServer =
  (run: (client: Mailroom, findings: Findings) => Promise<CheckResult>): CheckRun =>
  async (findings) => {
    if (!findings.client) return skip("needs a well-formed API key (see api_key)");
    if (!findings.serverUp) return skip("needs the server to answer (see server)");
    return run(findings.client, findings);
  };

/** A check that runs once `authentication` has read the workspace (a full_access key), and is skipped otherwise. */
const withWorkspace = (run: (client: Mailroom, workspace: Workspace) => Promise<CheckResult>): CheckRun =>
  withKeyAndServer(async (client, { workspace }) => (workspace ? run(client, workspace) : skip("needs a full_access key the server accepts (see authentication)")));

/** What a credential's prefix says it is. The server also checks a checksum, which the SDK does not export. */
const KEY_KINDS = [
  { prefix: "svc_live_", describe: "a live API key" },
  { prefix: "svc_test_", describe: "a sandbox API key" },
  { prefix: "mru_live_", describe: "a live user access token" },
  { prefix: "mru_test_", describe: "a sandbox user access token" },
];

/** A key as `api-keys list` shows one: its prefix and last four characters, never the secret. */
const redact = (key: string) => (key.length > 16 ? `${key.slice(0, 9)}…${key.slice(-4)}` : `${key.slice(0, 4)}…`);

const CREATE_KEY_FIX =
  "Create a key in the dashboard (API keys) or with `mailroom api-keys create` and a full_access key, then set MAILROOM_API_KEY; `make bootstrap` in the server's repository prints a first one.";

/** A user access token (mru_…) is not created but exchanged for, and lasts 15 minutes (docs/dashboard.md). */
const NEW_TOKEN_FIX =
  "Get a new token: the dashboard's signed-in session exchanges itself for one (POST /auth/token, see docs/dashboard.md), then set MAILROOM_API_KEY to it. For a script, an API key (svc_…) does not expire so soon.";

async function checkApiKey(findings: Findings): Promise<CheckResult> {
  const { apiKey } = findings;
  if (!apiKey) return fail("no API key", NO_API_KEY_FIX);
  const kind = KEY_KINDS.find(({ prefix }) => apiKey.startsWith(prefix));
  // Whitespace is what a copy and paste most often adds; the server would refuse the key for it,
  // and a line break or a character outside printable ASCII cannot even be sent in a header.
  if (!kind || !isSendableApiKey(apiKey)) {
    return fail(`${redact(apiKey)} is not a Mailroom key: one starts with svc_test_ (sandbox) or svc_live_ (live)`, `Copy the whole key, as it was shown when created. ${CREATE_KEY_FIX}`);
  }
  findings.client = findings.connect(apiKey);
  return pass(`${kind.describe} (${redact(apiKey)})`);
}

async function checkServer(findings: Findings): Promise<CheckResult> {
  // The probes need no key, and are sent none that matters (the SDK's client insists on one), so
  // that a key pasted by mistake goes nowhere. Not retried, as `system health` is not: the doctor
  // reports what the server says now.
  const probing = probe(findings.connect("none"));
  const { baseUrl } = probing;
  try {
    await probing.system.getHealth();
    await probing.system.getReadiness();
  } catch (error) {
    if (error instanceof APIConnectionError) return fail(`no answer from ${baseUrl}: ${error.message}`, noAnswerFix(error, baseUrl));
    if (error instanceof APIError && error.status === 503) {
      return fail(`${baseUrl} is up but not ready (${error.detail ?? error.title})`, "Wait for it to finish starting; if it stays so, check its database and its log.");
    }
    throw error;
  }
  findings.serverUp = true;
  return pass(`${baseUrl} is up and ready`);
}

async function checkAuthentication(client: Mailroom, findings: Findings): Promise<CheckResult> {
  let workspace: Workspace;
  try {
    workspace = await client.workspace.get();
  } catch (error) {
    if (error instanceof AuthenticationError) {
      if (findings.apiKey?.startsWith("mru_")) return fail(`the server refused the user access token: it is invalid or expired (a token lasts 15 minutes) (${error.code})`, NEW_TOKEN_FIX);
      return fail(`the server refused the key: it is invalid, revoked or expired (${error.code})`, CREATE_KEY_FIX);
    }
    // Reading the workspace needs full_access, as everything but sending does: a key refused it
    // is a sending_access key (the server's detail says so).
    if (error instanceof PermissionDeniedError) {
      return warn(
        `the key is accepted and can send, but may not read the workspace (${error.code}), so the checks after this one are skipped`,
        // The variable, not --api-key: a flag's value shows in the process list and the shell's history.
        "Run `MAILROOM_API_KEY=<a full_access key> mailroom doctor` to check the rest.",
      );
    }
    throw error;
  }
  findings.workspace = workspace;
  return pass(`workspace "${workspace.name}" (${workspace.id}), ${workspace.environment}`);
}

async function checkDefaultSender(_client: Mailroom, workspace: Workspace): Promise<CheckResult> {
  if (workspace.default_from) return pass(workspace.default_from);
  return warn("none: every message must give its own from", 'mailroom workspace update --default-from "Acme <hello@acme.example>"');
}

/** Whether live mail is accepted from a domain: its records are verified, or went missing less than its grace period ago. */
const sendsLive = (domain: Domain) => domain.status === "verified" || domain.status === "temporary_failure";

async function checkSendingDomains(client: Mailroom, workspace: Workspace): Promise<CheckResult> {
  const domains = await everything(client.domains.list({ limit: 100 }));
  const senderDomain = workspace.default_from === null ? undefined : domainOfMailbox(workspace.default_from);
  const verified = domains.filter((domain) => domain.status === "verified").length;
  const summary = `${domains.length} domain${domains.length === 1 ? "" : "s"}, ${verified} verified`;
  if (workspace.environment === "live") {
    const refused = liveRefusal(domains, senderDomain, summary);
    if (refused) return refused;
  }
  // Domains serve both environments: one failing matters to live mail even while testing in sandbox.
  const failing = domains.filter((domain) => domain.status === "temporary_failure" || domain.status === "failed");
  if (failing.length > 0) {
    return warn(
      `${summary}; ${failing.map((domain) => `${domain.name} is ${domain.status} (${sendsLive(domain) ? `live mail sent until ${domain.grace_ends_at}` : "live mail refused"})`).join(", ")}`,
      `Publish the missing records again (mailroom domains get <id> lists them), then ${failing.map((domain) => `mailroom domains verify ${domain.id}`).join("; ")}`,
    );
  }
  if (workspace.environment === "sandbox") return pass(`${summary}; sandbox never delivers, so it needs none, but live mail needs a verified one`);
  return pass(senderDomain ? `${summary}; the default sender's ${senderDomain} is verified` : summary);
}

/** Why live mail would be refused as the workspace is set up: no domain it may come from. */
function liveRefusal(domains: Domain[], senderDomain: string | undefined, summary: string): CheckResult | undefined {
  const createFix = `mailroom domains create --name ${senderDomain ?? "<your domain>"}, publish the records it prints, then mailroom domains verify <id>`;
  if (domains.length === 0) return fail("no sending domain: live mail is only sent from a verified one", createFix);
  if (senderDomain === undefined) {
    return domains.some(sendsLive) ? undefined : fail(`${summary}: live mail from any of them is refused`, `mailroom domains verify ${domains[0]?.id} (once its records are published)`);
  }
  const domain = domains.find((candidate) => candidate.name === senderDomain);
  if (!domain) return fail(`the default sender's domain ${senderDomain} is not added (${summary}): live mail from it is refused`, createFix);
  if (!sendsLive(domain)) {
    return fail(`the default sender's domain ${domain.name} is ${domain.status}: live mail from it is refused`, `mailroom domains verify ${domain.id} (once its records are published: mailroom domains get ${domain.id})`);
  }
  return undefined;
}

async function checkWebhooks(client: Mailroom): Promise<CheckResult> {
  const webhooks = await everything(client.webhooks.list({ limit: 100 }));
  if (webhooks.length === 0) return pass("no endpoints: events are only in `mailroom events list` (`mailroom listen` forwards them to a local receiver)");
  const disabled = webhooks.filter((webhook) => !webhook.enabled);
  const summary = `${webhooks.length} endpoint${webhooks.length === 1 ? "" : "s"}`;
  if (disabled.length === 0) return pass(`${summary}, all enabled`);
  return warn(
    `${summary}, ${disabled.length} disabled: ${disabled.map((webhook) => `${webhook.id} ${webhook.url} (${webhook.disabled_reason ?? "disabled"})`).join(", ")}`,
    `Once the receiver answers 2xx: ${disabled.map((webhook) => `mailroom webhooks update ${webhook.id} --enabled true`).join("; ")}`,
  );
}

/** Warn this close to the monthly quota, before sending is refused. */
const QUOTA_WARNING_SHARE = 0.9;

async function checkUsage(client: Mailroom, workspace: Workspace): Promise<CheckResult> {
  if (workspace.environment === "sandbox") return pass("sandbox mail never counts towards the monthly quota");
  const { quota } = await client.usage.get();
  const limit = quota.monthly_messages;
  if (limit === null) return pass(`${quota.used} live messages this month; no monthly limit`);
  const summary = `${quota.used} of ${limit} live messages this month (${Math.floor((quota.used / limit) * 100)} %); resets ${quota.resets_at}`;
  const fix = "Raise the quota with `mailroom workspace update --monthly-quota <messages>`, or remove it with --no-monthly-quota.";
  // At the quota, not only past it: the next message is already refused (429 monthly_quota_exceeded).
  if (quota.used >= limit) return fail(`${summary}: sending is refused until then`, fix);
  if (quota.used >= limit * QUOTA_WARNING_SHARE) return warn(summary, fix);
  return pass(summary);
}

/** In order: each check may build on what the ones before it found. */
const CHECKS: Check[] = [
  { name: "api_key", run: checkApiKey },
  { name: "server", run: checkServer },
  { name: "authentication", run: withKeyAndServer(checkAuthentication) },
  { name: "default_sender", run: withWorkspace(checkDefaultSender) },
  { name: "sending_domains", run: withWorkspace(checkSendingDomains) },
  { name: "webhooks", run: withWorkspace(checkWebhooks) },
  { name: "usage", run: withWorkspace(checkUsage) },
];

async function runCheck(check: Check, findings: Findings): Promise<CheckResult> {
  try {
    return await check.run(findings);
  } catch (error) {
    // An answer no check expects (a 5xx, a 429, the server gone mid-way) fails that check only.
    if (error instanceof MailroomError) {
      const request = error instanceof APIError && error.request_id ? ` (request ${error.request_id})` : "";
      return fail(`${error.message}${request}`, "Run `mailroom doctor` again; if it persists, look the request up in the server's log.");
    }
    throw error;
  }
}

/**
 * `mailroom doctor`: what is wrong with this set-up, and how to fix it (as `stripe` and `resend`
 * have). A client-side tool built on several operations, not an operation itself.
 */
export const doctor: Command = {
  command: "doctor",
  describe: "Check the key, the server and the workspace's sending set-up, and say how to fix what is wrong",
  operationId: undefined,
  examples: [
    ["$0 doctor", "Check the set-up of the key in MAILROOM_API_KEY"],
    ["MAILROOM_API_KEY=$MAILROOM_LIVE_KEY $0 doctor --json | jq '.checks[] | select(.status != \"pass\")'", "What needs attention before going live"],
  ],
  async run({ output, io }, args) {
    const { apiKey, baseUrl } = connectionOf(args, io);
    const findings: Findings = { apiKey, connect: (key) => newClient(key, baseUrl, io), serverUp: false };
    const checks: Array<{ name: string } & CheckResult> = [];
    for (const check of CHECKS) checks.push({ name: check.name, ...(await runCheck(check, findings)) });
    const ok = checks.every((check) => check.status !== "fail");
    output.result({ ok, checks }, () => renderChecks(checks));
    // Exit 1 as for an API error, so that a script or CI step stops on any failed check.
    return ok ? EXIT.ok : EXIT.apiError;
  },
};

/** One line per check, its fix indented under it, then the count of each status. */
function renderChecks(checks: Array<{ name: string } & CheckResult>): string {
  const width = Math.max(...checks.map((check) => check.name.length));
  const lines = checks.flatMap(({ name, status, detail, fix }) => [
    `${status}  ${name.padEnd(width)}  ${detail}`,
    ...(fix ? [`${" ".repeat(status.length + width + 4)}fix: ${fix}`] : []),
  ]);
  const counts = (["pass", "warn", "fail", "skip"] as const)
    .map((status) => [status, checks.filter((check) => check.status === status).length] as const)
    .filter(([, count]) => count > 0)
    .map(([status, count]) => `${count} ${status}`);
  return `${lines.join("\n")}\n\n${counts.join(", ")}`;
}

/** Every item of every page of a list. */
async function everything<Item>(list: PagePromise<Item>): Promise<Item[]> {
  const items: Item[] = [];
  for await (const item of list) items.push(item);
  return items;
}

/** The domain of `Acme <hello@acme.example>`, as the API names domains: lower-case, IDNs in ASCII. */
function domainOfMailbox(mailbox: string): string {
  const address = /<([^<>]*)>\s*$/.exec(mailbox)?.[1] ?? mailbox;
  const domain = address.slice(address.lastIndexOf("@") + 1).trim();
  return domainToASCII(domain) || domain.toLowerCase();
}
