import { Mailroom } from "mailroom";
import type { Browser, Page } from "playwright-core";
import { acceptInvitationThroughPage, launchBrowser, openPage, signInThroughPage, type OpenedPage } from "./browser.js";
import { signedUp, type DashboardSession } from "./dashboard-session.js";
import { startDnsServer, type DnsServer } from "./dns-server.js";
import { startTestServer, type TestServer } from "./http-server.js";
import { RECIPIENT_DOMAIN } from "./live-delivery.js";
import { startSmtpSink, type SmtpSink } from "./smtp-sink.js";

export interface DashboardHarnessOptions {
  /** Signs up as the first user (who gets a workspace), then signs in through the page. */
  owner: { email: string; password: string; workspace_name?: string };
  /** More of the server's settings (DNS_SERVERS, and SMTP_MX_PORT with a sink, are set here). */
  env?: Record<string, string>;
  /** Start an SMTP server on loopback as the MX of RECIPIENT_DOMAIN, so live mail can be delivered. */
  sink?: boolean;
}

type InvitationRole = Parameters<Mailroom["accounts"]["createInvitation"]>[0]["role"];

export interface DashboardHarness {
  dns: DnsServer;
  server: TestServer;
  browser: Browser;
  /** The owner's page, signed in on the overview. */
  opened: OpenedPage;
  page: Page;
  /** The owner's session over app.inject, for setting things up through the API. */
  session: DashboardSession;
  workspaceId: string;
  /** An SDK client acting as the owner in one environment of the workspace. */
  sdk(environment: "live" | "sandbox"): Promise<Mailroom>;
  /**
   * Another user's page: the owner invites `member` with `role`, and the member accepts through
   * the invitation page and lands on the overview. The caller closes its context.
   */
  openAsInvitedMember(member: { name: string; email: string; password: string }, role: InvitationRole): Promise<OpenedPage>;
  /** Closes the browser, the server, the sink and the DNS server. */
  close(): Promise<void>;
}

/**
 * The dashboard in real Chromium against the real server, whose resolver is a DNS server on
 * loopback (DNS_SERVERS), so that domains verify against records a test publishes there; with
 * `sink`, the recipients' MX is an SMTP server on loopback too, and nothing leaves the machine.
 * The worker does not run (test/helpers/http-server.ts): `server.testApp.drain()` delivers.
 */
export async function startDashboardHarness(options: DashboardHarnessOptions & { sink: true }): Promise<DashboardHarness & { sink: SmtpSink }>;
export async function startDashboardHarness(options: DashboardHarnessOptions): Promise<DashboardHarness>;
export async function startDashboardHarness(options: DashboardHarnessOptions): Promise<DashboardHarness & { sink?: SmtpSink }> {
  // Closed in reverse order of starting; a failure half-way closes what had started.
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const dns = await startDnsServer();
    closers.push(() => dns.close());
    const sink = options.sink ? await startSmtpSink() : undefined;
    if (sink) closers.push(() => sink.close());
    const server = await startTestServer({
      DNS_SERVERS: dns.address,
      ...(sink ? { SMTP_MX_PORT: String(sink.port), SMTP_CONNECT_TIMEOUT_MS: "2000", SMTP_COMMAND_TIMEOUT_MS: "5000" } : {}),
      ...options.env,
    });
    closers.push(() => server.close());
    if (sink) {
      dns.add(`mx1.${RECIPIENT_DOMAIN}`, { type: "A", address: "127.0.0.1" });
      dns.add(RECIPIENT_DOMAIN, { type: "MX", priority: 10, exchange: `mx1.${RECIPIENT_DOMAIN}` });
    }
    const { session, workspaceId } = await signedUp(server.testApp, options.owner);
    const browser = await launchBrowser();
    closers.push(() => browser.close());
    const opened = await openPage(browser, server.baseUrl);
    await signInThroughPage(opened.page, options.owner.email, options.owner.password);
    const sdk = async (environment: "live" | "sandbox") => new Mailroom({ apiKey: await session.token(workspaceId, environment), baseUrl: server.baseUrl, maxRetries: 0 });
    return {
      dns,
      ...(sink ? { sink } : {}),
      server,
      browser,
      opened,
      page: opened.page,
      session,
      workspaceId,
      sdk,
      openAsInvitedMember: async (member, role) => {
        const invitation = await (await sdk("sandbox")).accounts.createInvitation({ email: member.email, role });
        const invited = await openPage(browser, server.baseUrl);
        try {
          await acceptInvitationThroughPage(invited.page, invitation.accept_url, member);
          return invited;
        } catch (error) {
          await invited.context.close();
          throw error;
        }
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
