import { isIP } from "node:net";

/** Whether a host (an address, or `localhost`) is this machine: 127.0.0.0/8, ::1, or 127.x mapped into IPv6. */
export function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  const mapped = host.toLowerCase().startsWith("::ffff:") ? host.slice(7) : host;
  if (isIP(mapped) === 4) return mapped.startsWith("127.");
  return host === "::1";
}
