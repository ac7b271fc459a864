// Every call to the dashboard's own session routes (`/auth/*`, docs/dashboard.md) lives here, and
// nowhere else calls fetch: `/v1` is reached only through the SDK. The routes answer RFC 9457
// problems like the API, so their errors are the SDK's APIError classes too and every page shows
// them the same way.
import { APIConnectionError, APIError } from "mailroom";
import type { Role, User, WorkspaceMembership } from "mailroom";
import { serverClock } from "../api/server-clock.js";
import type { Environment } from "../lib/environment.js";

export type SignupMode = "first_user" | "open" | "invitation_only";

/** `GET /auth/session`: answered signed in or not, so the page always learns its CSRF token. */
export interface Session {
  signed_in: boolean;
  user: User | null;
  workspaces: WorkspaceMembership[];
  csrf_token: string;
  signup: SignupMode;
}

/** `POST /auth/token`: a user access token for one workspace and environment (15 minutes). */
export interface TokenGrant {
  token: string;
  expires_at: string;
  expires_in: number;
  workspace_id: string;
  environment: Environment;
  role: Role;
}

/** `GET /auth/invitations/{token}`: what the invitation offers, before it is accepted. */
export interface InvitationPreview {
  email: string;
  role: Role;
  workspace_name: string;
  expires_at: string;
}

export interface SignUpParams {
  email: string;
  password: string;
  name?: string;
  workspace_name?: string;
  invitation_token?: string;
}

// The double-submit CSRF token (docs/dashboard.md): learnt from every session answer, sent as
// X-CSRF-Token on every POST. Not a credential on its own: it is useless without the HttpOnly
// cookie it is paired with.
let csrfToken: string | undefined;

type Method = "GET" | "POST";

async function send(method: Method, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (method === "POST") {
    // A JSON content type is part of the CSRF defence: an HTML form cannot send one.
    headers["content-type"] = "application/json";
    headers["x-csrf-token"] = csrfToken ?? "";
  }
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      redirect: "error",
      ...(method === "POST" ? { body: JSON.stringify(body ?? {}) } : {}),
    });
  } catch (cause) {
    throw new APIConnectionError("Could not reach the Mailroom server. Check your connection and try again.", { cause });
  }
  // Whatever it answers, it tells the page the server's time (api/server-clock.ts).
  serverClock.observe(response);
  return response;
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function isSession(body: unknown): body is Session {
  return typeof body === "object" && body !== null && typeof (body as Session).csrf_token === "string" && "signed_in" in body;
}

async function request<T>(method: Method, path: string, body?: unknown): Promise<T> {
  if (method === "POST" && csrfToken === undefined) await getSession();
  let response = await send(method, path, body);
  let data = await readBody(response);
  if (method === "POST" && response.status === 403 && (data as { code?: unknown } | undefined)?.code === "csrf_failed") {
    // The token changes with the session (a sign-in in another tab, an expired session): learn
    // the current one and try once more. A second refusal is real and is shown.
    await getSession();
    response = await send(method, path, body);
    data = await readBody(response);
  }
  if (!response.ok) throw APIError.from(response.status, data, response.headers);
  if (isSession(data)) csrfToken = data.csrf_token;
  return data as T;
}

export function getSession(): Promise<Session> {
  return request<Session>("GET", "/auth/session");
}

export function signUp(params: SignUpParams): Promise<Session> {
  return request<Session>("POST", "/auth/sign-up", params);
}

export function signIn(email: string, password: string): Promise<Session> {
  return request<Session>("POST", "/auth/sign-in", { email, password });
}

export async function signOut(): Promise<void> {
  await request<undefined>("POST", "/auth/sign-out");
}

/**
 * Every session of the user is signed out and its access tokens revoked, this one's too; the
 * answer is a new session for this page, whose CSRF token request() takes up like a sign-in's.
 */
export async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
  await request<Session>("POST", "/auth/password", { current_password: currentPassword, new_password: newPassword });
}

export function exchangeToken(workspaceId: string, environment: Environment): Promise<TokenGrant> {
  return request<TokenGrant>("POST", "/auth/token", { workspace_id: workspaceId, environment });
}

export function getInvitation(token: string): Promise<InvitationPreview> {
  return request<InvitationPreview>("GET", `/auth/invitations/${encodeURIComponent(token)}`);
}

export function acceptInvitation(token: string): Promise<Session> {
  return request<Session>("POST", "/auth/invitations/accept", { token });
}
