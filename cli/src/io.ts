import { UsageError } from "./command.js";

/** Where the CLI reads and writes: the real process, or buffers in tests. */
export interface Io {
  /** Text, and for downloads (`inbound get-attachment` without --output) bytes. */
  stdout: { write(chunk: string | Uint8Array): unknown; isTTY?: boolean };
  stderr: { write(chunk: string): unknown; isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** Reads a file the user named (--html-file, --attach, --file). */
  readFile(path: string): Promise<Buffer>;
  /** Writes a file the user named (--output), replacing it. */
  writeFile(path: string, data: Uint8Array): Promise<void>;
  /** Whether stdin is a terminal, where a person can answer a question (confirm.ts). Absent: it is not. */
  stdin?: { isTTY?: boolean };
  /** Reads all of stdin, for `--file -`. Absent where there is no stdin to read. */
  readStdin?(): Promise<Buffer>;
  /**
   * Reads one line of stdin, without its line break: a person's answer to a question. Undefined
   * when stdin ends first (Ctrl-D). Absent where there is no stdin to read.
   */
  readLine?(): Promise<string | undefined>;
  /** Resolves when the user asks to stop (Ctrl-C) a command that catches interrupts (below). */
  interrupted: Promise<void>;
  /**
   * For a command that stops gracefully (`events tail`, `listen`): from the call on, Ctrl-C
   * (SIGINT) or SIGTERM resolves `interrupted` instead of ending the process at once, as it does
   * for every other command. Absent where there are no signals to catch (tests).
   */
  catchInterrupts?(): void;
  /**
   * Sets what to say when Ctrl-C (SIGINT) or SIGTERM ends the command at once (as it does unless
   * the command catches interrupts): `say` runs just before the process exits, so it writes at
   * once or not at all. Absent where there are no signals.
   */
  beforeSignalExit?(say: () => void): void;
  /** The Mailroom client's fetch; tests may inject one. Default: the global fetch. */
  fetch?: (input: Request) => Promise<Response>;
}

/** A file the user named, or a usage error naming the flag and why it cannot be read. */
export async function readUserFile(io: Io, path: string, flag: string): Promise<Buffer> {
  try {
    return await io.readFile(path);
  } catch (error) {
    throw new UsageError(`--${flag}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
  }
}

/**
 * What a `--file`-style flag names: the file, or all of stdin for `-`, with the name to quote in
 * messages about it. Read before anything is sent, so that a bad path is a usage error.
 */
export async function readFileOrStdin(io: Io, path: string, flag: string): Promise<{ source: string; content: Buffer }> {
  if (path !== "-") return { source: path, content: await readUserFile(io, path, flag) };
  if (!io.readStdin) throw new UsageError(`--${flag} -: there is no stdin to read here; give a path.`);
  return { source: "stdin", content: await io.readStdin() };
}

/** Writes a file the user named, or a usage error naming the flag and why it cannot be written. */
export async function writeUserFile(io: Io, path: string, data: Uint8Array, flag: string): Promise<void> {
  try {
    await io.writeFile(path, data);
  } catch (error) {
    throw new UsageError(`--${flag}: cannot write ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
  }
}
