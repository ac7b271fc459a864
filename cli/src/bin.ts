#!/usr/bin/env node
import { readFile, writeFile } from "node:fs/promises";
import { constants } from "node:os";
import { createInterface } from "node:readline";
import { isatty } from "node:tty";
import { run } from "./run.js";

const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** What the command asked to be said if a signal ends it (Io.beforeSignalExit). */
let lastWords = () => {};

/**
 * Ctrl-C (SIGINT) and SIGTERM end a command at once, with the status a shell reports for a process
 * the signal ended (128 + its number: 130, 143), unless the command catches them (below). What it
 * asked to be said first (the request a stop leaves in doubt) is said; a write to a pipe can still
 * be under way (they are asynchronous on POSIX), so the exit waits until stderr has taken it.
 */
function exitOnSignal(signal: NodeJS.Signals): void {
  const status = 128 + constants.signals[signal];
  try {
    lastWords();
  } finally {
    process.stderr.write("", () => process.exit(status));
  }
}
for (const signal of STOP_SIGNALS) process.on(signal, exitOnSignal);

/**
 * The reader of our output went away (`mailroom events tail | head -1`): it has what it wanted, so
 * stop at once and quietly, exit 0, rather than die of an unhandled EPIPE with a stack trace, or
 * tail on into a pipe nobody reads. Exit 0, not 141 (128 + SIGPIPE, what a process the signal
 * ended reports), so that a script's `set -o pipefail` does not fail a pipeline that did what it
 * was asked. A closed stderr only loses what would have been said there: the command goes on, and
 * its exit code still tells how it went.
 */
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});
process.stderr.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
});

let stop!: () => void;
const interrupted = new Promise<void>((resolve) => (stop = resolve));

/** For a command that stops gracefully (`events tail`, `listen`): the first signal resolves `interrupted` instead. */
function catchInterrupts(): void {
  for (const signal of STOP_SIGNALS) {
    process.off(signal, exitOnSignal);
    process.once(signal, () => stop());
  }
}

/**
 * One line of stdin, or undefined at its end. Not in the terminal's raw mode (terminal: false), so
 * the terminal itself echoes, edits the line and turns Ctrl-C into SIGINT, which ends the command
 * as anywhere else. Closing the reader pauses stdin, which then holds the process open no more.
 */
function readLine(): Promise<string | undefined> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin, terminal: false });
    let answer: string | undefined;
    lines.once("line", (line) => {
      answer = line;
      lines.close();
    });
    lines.once("close", () => resolve(answer));
  });
}

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  readFile: (path) => readFile(path),
  writeFile: (path, data) => writeFile(path, data),
  // isatty, not process.stdin.isTTY: it asks without opening stdin, which most commands never read.
  stdin: { isTTY: isatty(0) },
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  },
  readLine,
  interrupted,
  catchInterrupts,
  beforeSignalExit: (say) => (lastWords = say),
});
