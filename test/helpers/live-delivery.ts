import { expect } from "vitest";
import { SETTINGS } from "../../src/config.js";
import { startDnsServer, type DnsServer } from "./dns-server.js";
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from "./smtp-sink.js";
import type { TestDatabase } from "./databases.js";
import { createTestApp, type TestApp } from "./test-app.js";

/** This MTA's host name in tests: the SPF `a:` mechanism and the return-path MX point at it. */
export const SENDING_HOSTNAME = "mta.mailroom.test";
/** The recipients' domain: its MX is the loopback SMTP sink. */
export const RECIPIENT_DOMAIN = "example.net";

export interface LiveHarness {
  t: TestApp;
  dns: DnsServer;
  sink: SmtpSink;
  /** The sending domain's DNS records as published (name -> TXT value), for DKIM verification. */
  published: Record<string, string>;
  /** Sends one live message (from hello@acme.example unless `from` is given); returns its id. */
  send(body: Record<string, unknown>): Promise<string>;
  message(id: string): Promise<{ status: string; message_id_header: string; recipients: Array<{ email: string; status: string; detail: string | null }> }>;
  events(id: string): Promise<Array<{ type: string; recipient: string | null; data: Record<string, unknown> }>>;
  close(): Promise<void>;
}

/**
 * A live environment on loopback (DESIGN.md §11): a real DNS server answers for the sending
 * domain and the recipients' domain, and a real SMTP server is the recipients' MX. The sending
 * domain acme.example is added through the API, its records published in that DNS server
 * exactly as the API returned them, and verified through the API.
 */
export async function startLiveHarness(database: TestDatabase, options: { env?: (sink: SmtpSink) => Record<string, string>; sink?: SmtpSinkOptions } = {}): Promise<LiveHarness> {
  const dns = await startDnsServer();
  const sink = await startSmtpSink(options.sink);
  const t = await createTestApp(database, {
    DNS_SERVERS: dns.address,
    SMTP_MX_PORT: String(sink.port),
    SENDING_HOSTNAME,
    SMTP_CONNECT_TIMEOUT_MS: "2000",
    SMTP_COMMAND_TIMEOUT_MS: "5000",
    // Live mail is rendered and signed on a compose thread, as SETTINGS' default has it.
    DELIVERY_COMPOSE_THREADS: SETTINGS.deliveryComposeThreads.default,
    ...options.env?.(sink),
  });
  const close = async () => {
    await t.close();
    await sink.close();
    await dns.close();
  };
  // A harness that fails half-built closes what it started: the test never gets it to close.
  const published = await publishAndVerifyDomains(t, dns).catch(async (error: unknown) => {
    await close();
    throw error;
  });

  return {
    t,
    dns,
    sink,
    published,
    async send(body) {
      const res = await t.call({ method: "POST", url: "/v1/messages", key: t.workspace.liveKey, payload: { from: "Acme <hello@acme.example>", subject: "Your receipt", html: "<p>Thanks</p>", ...body } });
      expect(res.statusCode, res.body).toBe(202);
      return res.json().id as string;
    },
    async message(id) {
      return (await t.call({ method: "GET", url: `/v1/messages/${id}`, key: t.workspace.liveKey })).json();
    },
    async events(id) {
      return (await t.call({ method: "GET", url: `/v1/messages/${id}/events?limit=100`, key: t.workspace.liveKey })).json().data;
    },
    close,
  };
}

/**
 * Points the recipients' domain at the sink, adds acme.example through the API, publishes its
 * records exactly as the API returned them, and verifies it through the API. Returns the TXT
 * records published, by name.
 */
async function publishAndVerifyDomains(t: TestApp, dns: DnsServer): Promise<Record<string, string>> {
  dns.add(`mx1.${RECIPIENT_DOMAIN}`, { type: "A", address: "127.0.0.1" });
  dns.add(RECIPIENT_DOMAIN, { type: "MX", priority: 10, exchange: `mx1.${RECIPIENT_DOMAIN}` });

  const created = await t.call({ method: "POST", url: "/v1/domains", payload: { name: "acme.example" }, key: t.workspace.liveKey });
  expect(created.statusCode, created.body).toBe(201);
  const domain = created.json() as { id: string; records: Array<{ type: "TXT" | "MX"; name: string; value: string; priority: number | null }> };
  const published: Record<string, string> = {};
  for (const record of domain.records) {
    if (record.type === "MX") dns.add(record.name, { type: "MX", priority: record.priority ?? 10, exchange: record.value });
    else {
      dns.add(record.name, { type: "TXT", value: record.value });
      published[record.name] = record.value;
    }
  }
  const verified = await t.call({ method: "POST", url: `/v1/domains/${domain.id}/verify`, key: t.workspace.liveKey });
  expect(verified.json().status, verified.body).toBe("verified");
  return published;
}

/** The header block of a raw message, unfolded, as [name, value] pairs in order. */
export function headersOf(raw: Buffer | string): Array<[string, string]> {
  const text = raw.toString();
  const end = text.indexOf("\r\n\r\n");
  const block = (end === -1 ? text : text.slice(0, end)).replace(/\r\n[ \t]/g, " ");
  return block.split("\r\n").map((line) => {
    const colon = line.indexOf(":");
    return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
  });
}
