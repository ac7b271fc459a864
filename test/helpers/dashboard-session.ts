import type { InjectOptions, LightMyRequestResponse } from "fastify";
import type { TestApp } from "./test-app.js";

/**
 * A browser's view of the dashboard's /auth routes over app.inject: it keeps the cookies it is
 * given, sends the CSRF token on every POST, and exchanges the session for access tokens.
 */
export class DashboardSession {
  private readonly cookies = new Map<string, string>();
  csrf = "";

  constructor(private readonly t: TestApp) {}

  /** Loads GET /auth/session (sets the CSRF cookie and token) and returns its body. */
  async load(): Promise<Record<string, unknown>> {
    const res = await this.request({ method: "GET", url: "/auth/session" });
    const body = res.json() as Record<string, unknown>;
    this.csrf = body.csrf_token as string;
    return body;
  }

  async request(options: InjectOptions): Promise<LightMyRequestResponse> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const res = await this.t.app.inject({ ...options, headers: { ...(cookie ? { cookie } : {}), ...options.headers } });
    for (const set of res.cookies as Array<{ name: string; value: string }>) {
      if (set.value === "") this.cookies.delete(set.name);
      else this.cookies.set(set.name, set.value);
    }
    return res;
  }

  post(url: string, payload?: object, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.request({ method: "POST", url, ...(payload ? { payload } : {}), headers: { "x-csrf-token": this.csrf, ...headers } });
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  async signUp(body: Record<string, unknown>): Promise<LightMyRequestResponse> {
    if (!this.csrf) await this.load();
    const res = await this.post("/auth/sign-up", { password: "correct horse battery", ...body });
    if (res.statusCode === 201) this.csrf = res.json().csrf_token;
    return res;
  }

  async signIn(email: string, password = "correct horse battery"): Promise<LightMyRequestResponse> {
    if (!this.csrf) await this.load();
    const res = await this.post("/auth/sign-in", { email, password });
    if (res.statusCode === 200) this.csrf = res.json().csrf_token;
    return res;
  }

  /** A user access token for a workspace and environment; throws unless the exchange succeeds. */
  async token(workspaceId: string, environment: "live" | "sandbox" = "sandbox"): Promise<string> {
    const res = await this.post("/auth/token", { workspace_id: workspaceId, environment });
    if (res.statusCode !== 200) throw new Error(`token exchange failed: ${res.statusCode} ${res.body}`);
    return res.json().token;
  }
}

/** Signs up a new user (the first one of an install creates a workspace) and returns its session. */
export async function signedUp(t: TestApp, body: Record<string, unknown>): Promise<{ session: DashboardSession; workspaceId: string; userId: string }> {
  const session = new DashboardSession(t);
  const res = await session.signUp(body);
  if (res.statusCode !== 201) throw new Error(`sign-up failed: ${res.statusCode} ${res.body}`);
  const account = res.json();
  return { session, workspaceId: account.workspaces[0].id, userId: account.user.id };
}
