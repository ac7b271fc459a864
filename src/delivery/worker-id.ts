import { createHash, randomBytes } from "node:crypto";
import { hostname } from "node:os";

/** The `locked_by` columns a worker's id is written to (jobs, webhook_deliveries) are VARCHAR(64). */
export const LOCKED_BY_LENGTH = 64;

/**
 * A process's name in the leases it takes: `<host>-<pid>-<random>`, then `-<role>` when given
 * (`mail-3-4242-a1b2c3-webhooks`), readable in `locked_by` and in logs. A host name can be as
 * long as the whole column (Linux allows 64 characters, DNS 253), and MySQL in strict mode refuses
 * a longer value, which would fail every claim: a host name too long to fit is cut and marked with
 * 8 hex digits of its SHA-256 (`very-long-pod-name-pre~1f3a9c0b`), so it still says which machine
 * at a glance and two long names with the same beginning stay apart. `reserve` keeps that many
 * characters free for what the caller appends to its id (the dispatcher's claim counter).
 */
export function workerId(options: { role?: string; reserve?: number } = {}, host: string = hostname()): string {
  const rest = `-${process.pid}-${randomBytes(3).toString("hex")}${options.role ? `-${options.role}` : ""}`;
  const room = LOCKED_BY_LENGTH - (options.reserve ?? 0) - rest.length;
  if (host.length <= room) return `${host}${rest}`;
  const digest = createHash("sha256").update(host).digest("hex").slice(0, 8);
  return `${host.slice(0, Math.max(0, room - digest.length - 1))}~${digest}${rest}`;
}
