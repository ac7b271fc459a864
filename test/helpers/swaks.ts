import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Sends mail with swaks (Debian's `swaks` package), the SMTP client people test MX hosts with:
 * the inbound tests talk to the server as a real, independent client does.
 */
export interface SwaksOptions {
  /** "127.0.0.1:2525". */
  server: string;
  /** "" for the null sender (`MAIL FROM:<>`), as MTAs send bounces. */
  from: string;
  to: string | string[];
  /** The whole message (RFC 5322), sent as DATA; else swaks composes one from header/body/attach. */
  data?: string | Buffer;
  headers?: Record<string, string>;
  body?: string;
  /** Files to attach: [path, content type]. */
  attach?: Array<[string, string]>;
  helo?: string;
  /** Opens the connection with a PROXY protocol v1 header naming this client, as a load balancer would. */
  proxyFrom?: string;
}

export interface SwaksResult {
  exitCode: number;
  /** The server's replies in order, e.g. ["220 …", "250 …", "550 5.7.1 …"] (multi-line replies joined). */
  replies: string[];
  /** The last reply: the one that ended the transaction, or the answer to DATA. */
  last: string;
  transcript: string;
}

export async function swaks(options: SwaksOptions): Promise<SwaksResult> {
  const dir = mkdtempSync(join(tmpdir(), "mailroom-swaks-"));
  try {
    const args = ["--server", options.server, "--from", options.from === "" ? "<>" : options.from, "--to", [options.to].flat().join(","), "--helo", options.helo ?? "client.example.org", "--timeout", "15"];
    if (options.data !== undefined) {
      const file = join(dir, "message.eml");
      writeFileSync(file, options.data);
      args.push("--data", `@${file}`);
    }
    for (const [name, value] of Object.entries(options.headers ?? {})) args.push("--add-header", `${name}: ${value}`);
    if (options.body !== undefined) args.push("--body", options.body);
    for (const [path, type] of options.attach ?? []) args.push("--attach-type", type, "--attach", `@${path}`);
    if (options.proxyFrom !== undefined) {
      const [host, port] = options.server.split(":");
      const family = options.proxyFrom.includes(":") ? "TCP6" : "TCP4";
      args.push("--proxy-version", "1", "--proxy-family", family, "--proxy-source", options.proxyFrom, "--proxy-source-port", "40000", "--proxy-dest", host!, "--proxy-dest-port", port!);
    }
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      const child = execFile("swaks", args, { maxBuffer: 64 * 1024 * 1024, timeout: 20_000 }, (error, stdout) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout }));
      child.stdin?.end(); // swaks asks on stdin for anything missing; nothing here answers
    });
    // swaks marks the server's lines with "<-" (success) or "<**" (error), and continuation lines likewise.
    const replies: string[] = [];
    for (const line of stdout.split("\n")) {
      const match = /^<(?:-|\*\*)\s+(\d{3})([- ])(.*)$/.exec(line);
      if (!match) continue;
      const text = `${match[1]} ${match[3]!.trim()}`;
      const previous = replies[replies.length - 1];
      if (previous !== undefined && previous.endsWith("\u0000")) replies[replies.length - 1] = `${previous.slice(0, -1)}\n${text}`;
      else replies.push(text);
      if (match[2] === "-") replies[replies.length - 1] += "\u0000";
    }
    const done = replies.filter((r) => !r.startsWith("221"));
    return { exitCode: code, replies, last: done[done.length - 1] ?? "", transcript: stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
