import { verbOf, type Command, type Noun } from "../command.js";
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

/**
 * The command, or else the group, that the words of a command line (yargs' `_`) name, with its
 * path (`messages get`; `messages list-events` for the alias `messages events`); undefined when
 * the first word names neither.
 */
export function addressedBy(words: readonly unknown[]): { path: string; command?: Command } | undefined {
  const [first = "", second = ""] = words.map(String);
  // Own keys only: a first word such as "toString" would otherwise find Object.prototype's.
  const topLevel = Object.hasOwn(shortcuts, first) ? shortcuts[first] : Object.hasOwn(tools, first) ? tools[first] : undefined;
  if (topLevel) return { path: first, command: topLevel };
  const noun = nouns.find((candidate) => candidate.name === first);
  if (!noun) return undefined;
  const command = noun.commands.find((candidate) => verbOf(candidate) === second || (candidate.aliases ?? []).includes(second));
  return command ? { path: `${noun.name} ${verbOf(command)}`, command } : { path: noun.name };
}

/** operationId -> the command that calls it (`createMessage` -> `messages create`). */
export function commandsByOperation(): Map<string, string> {
  const map = new Map<string, string>();
  for (const noun of nouns) {
    for (const command of noun.commands) {
      if (command.operationId) map.set(command.operationId, `${noun.name} ${verbOf(command)}`);
    }
  }
  return map;
}
