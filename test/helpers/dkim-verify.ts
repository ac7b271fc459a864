import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * DKIM verification by an implementation independent of the signer (dkimpy, Debian's
 * python3-dkim, run as a subprocess), so that a signing bug cannot hide behind a verifier that
 * shares it. Keys come from `txtRecords` only, never from DNS.
 */
export interface DkimResult {
  domain: string;
  selector: string;
  algorithm: string;
  valid: boolean;
  /** Why the signature did not verify (dkimpy's words), or null. */
  error: string | null;
}

const SCRIPT = fileURLToPath(new URL("dkim-verify.py", import.meta.url));
// Debian's own interpreter: python3-dkim installs into its dist-packages, which a python3 earlier
// on PATH (pyenv, a venv) does not see.
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

/**
 * One result per DKIM-Signature header, top to bottom (none for an unsigned message).
 * `txtRecords`: {"sel._domainkey.example.com": "v=DKIM1; k=rsa; p=..."}.
 */
export function verifyDkim(raw: Buffer | string, txtRecords: Record<string, string>): Promise<DkimResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [SCRIPT, JSON.stringify(txtRecords)], { stdio: ["pipe", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`${PYTHON} ${SCRIPT} exited with ${code}: ${Buffer.concat(stderr).toString().trim()}`));
      resolve(JSON.parse(Buffer.concat(stdout).toString()) as DkimResult[]);
    });
    // A verifier that dies before reading stdin is reported by its exit code, not by EPIPE.
    child.stdin.on("error", () => {});
    child.stdin.end(raw);
  });
}
