import type { Command, Noun } from "../command.js";
import { accounts } from "./accounts.js";
import { apiKeys } from "./api-keys.js";
import { auditEvents } from "./audit-events.js";
import { doctor } from "./doctor.js";
import { events } from "./events.js";
import { domains } from "./domains.js";
import { inbound } from "./inbound.js";
import { listen } from "./listen.js";
import { createMessage, messages } from "./messages.js";
import { metrics } from "./metrics.js";
import { requestLogs } from "./request-logs.js";
import { suppressions } from "./suppressions.js";
import { system } from "./system.js";
import { templates } from "./templates.js";
import { usage } from "./usage.js";
import { webhooks } from "./webhooks.js";
import { workspace } from "./workspace.js";

/** Every command group, in the order `mailroom --help` lists them. */
export const nouns: Noun[] = [messages, inbound, templates, events, webhooks, apiKeys, workspace, auditEvents, requestLogs, domains, suppressions, usage, metrics, accounts, system];

/** Top-level shortcuts for the commands people type most: `mailroom send` is `messages create`. */
export const shortcuts: Record<string, Command> = { send: createMessage };

/** Top-level commands that are not an operation but a client-side tool built on several. */
export const tools: Record<string, Command> = { listen, doctor };

/** operationId -> the command that calls it (`createMessage` -> `messages create`). */
export function commandsByOperation(): Map<string, string> {
  const map = new Map<string, string>();
  for (const noun of nouns) {
    for (const command of noun.commands) {
      if (command.operationId) map.set(command.operationId, `${noun.name} ${command.command.split(" ")[0]}`);
    }
  }
  return map;
}
