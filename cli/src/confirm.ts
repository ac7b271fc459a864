import type { Argv } from "yargs";
import type { Args, Context } from "./command.js";
import { DeclinedError, UsageError } from "./command.js";
import { printable } from "./output.js";

/** What a destructive command loses, in the words its question and refusals are made of. */
export interface Loss {
  /** The command as typed, for the message to scripts: `templates delete`. */
  command: string;
  verb: "delete" | "revoke" | "remove";
  /** What is lost, named as the user named it: `template welcome`. */
  what: string;
  /** What losing it means, after the question: `It stops working at once; this cannot be undone.` */
  consequence: string;
}

/** `--yes` (`-y`), for every command that asks before it acts (confirm below). */
export const withYes = (yargs: Argv): Argv => yargs.option("yes", { alias: "y", type: "boolean", describe: "Act without asking first; needed where there is no terminal to ask on (a script, a pipe, --json)" });

/**
 * Goes on only once it is sure the user means it, as gh and the Stripe CLI do: with --yes; else at
 * a terminal, by asking on stderr and reading the answer from stdin (y or yes goes on; anything
 * else, or stdin's end, is a DeclinedError, exit 1). Anywhere else it is a usage error (exit 2):
 * a script that means it says --yes, so that an unattended run never loses anything by default.
 * Called before any request.
 */
export async function confirm({ client, output, io }: Context, args: Args, loss: Loss): Promise<void> {
  // The key is checked first (no request): a question answered only to hear that the key is missing wastes the answer.
  client();
  if (args.yes === true) return;
  // All three: the question goes to stderr, the answer comes from stdin, and with stdout piped
  // (or --json) a program reads the result, which is no place for a conversation.
  const interactive = io.stdin?.isTTY === true && io.stderr.isTTY === true && io.stdout.isTTY === true && !output.json;
  if (!interactive || !io.readLine) throw new UsageError(`${loss.command} ${loss.verb}s ${loss.what} and there is no terminal to confirm on: pass --yes.`);
  const verb = loss.verb.charAt(0).toUpperCase() + loss.verb.slice(1);
  io.stderr.write(printable(`${verb} ${loss.what}? ${loss.consequence} [y/N] `));
  const answer = await io.readLine();
  if (answer !== undefined && /^y(es)?$/i.test(answer.trim())) return;
  // At stdin's end (Ctrl-D) the terminal echoed no line break: the refusal starts a line of its own.
  if (answer === undefined) io.stderr.write("\n");
  throw new DeclinedError(`Nothing ${loss.verb}d.`);
}
