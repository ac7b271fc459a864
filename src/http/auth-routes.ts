import fastifyCookie from "@fastify/cookie";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ENVIRONMENTS, type Environment } from "../domain/environments.js";
import { PASSWORD_LIMITS } from "../services/passwords.js";
import { SESSION_POLICY, type SignedIn, type SignUpInput } from "../services/sessions.js";
import type { Services } from "../runtime.js";
import { checkCsrf, newCsrfToken } from "./csrf.js";
import { DashboardCookies } from "./session-cookie.js";

/**
 * The dashboard's own routes (docs/dashboard.md): sign-up, sign-in, the session, and the
 * exchange of the session for a short-lived bearer token that the page then uses on /v1 like any
 * client. They live outside the /v1 contract because they deal in cookies, which /v1 never
 * accepts. Handlers only translate; SessionsService and MembersService decide.
 */
const email = { type: "string", format: "email", maxLength: 320 } as const;
const password = { type: "string", minLength: 1, maxLength: PASSWORD_LIMITS.max * 4 } as const;
const secret = { type: "string", minLength: 1, maxLength: 200 } as const;
const body = (properties: Record<string, object>, required: string[]) => ({ type: "object", additionalProperties: false, properties, required });

const SCHEMAS = {
  signUp: body({ email, password, name: { type: "string", maxLength: 100 }, workspace_name: { type: "string", minLength: 1, maxLength: 100 }, invitation_token: secret }, ["email", "password"]),
  signIn: body({ email: { type: "string", minLength: 1, maxLength: 320 }, password }, ["email", "password"]),
  password: body({ current_password: password, new_password: password }, ["current_password", "new_password"]),
  token: body({ workspace_id: { type: "string", minLength: 1, maxLength: 64 }, environment: { type: "string", enum: [...ENVIRONMENTS] } }, ["workspace_id", "environment"]),
  accept: body({ token: secret }, ["token"]),
};

export function registerAuthRoutes(app: FastifyInstance, services: Services, publicUrl: string | null): void {
  const cookies = new DashboardCookies(publicUrl);
  const { sessions, members } = services;

  const signedIn = async (req: FastifyRequest, reply: FastifyReply, result: SignedIn) => {
    cookies.write(req, reply, "session", result.sessionSecret, Math.floor(SESSION_POLICY.absoluteMs / 1000));
    // A fresh CSRF token with every new session: a token planted before sign-in is worthless after.
    const csrf = newCsrfToken();
    cookies.write(req, reply, "csrf", csrf);
    return { signed_in: true, ...result.account, csrf_token: csrf, signup: await sessions.signupState() };
  };
  const session = (req: FastifyRequest) => sessions.require(cookies.read(req, "session"));

  // Registered inside this plugin: cookies are parsed on /auth/* only, never on /v1.
  app.register(async (auth) => {
    await auth.register(fastifyCookie);
    auth.addHook("onRequest", async (req, reply) => {
      reply.header("cache-control", "no-store");
      if (req.method !== "GET" && req.method !== "HEAD") checkCsrf(req, cookies, publicUrl);
    });

    auth.get("/auth/session", async (req, reply) => {
      let csrf = cookies.read(req, "csrf");
      if (!csrf) {
        csrf = newCsrfToken();
        cookies.write(req, reply, "csrf", csrf);
      }
      const active = await sessions.resolve(cookies.read(req, "session"));
      const signup = await sessions.signupState();
      if (!active) return { signed_in: false, user: null, workspaces: [], csrf_token: csrf, signup };
      return { signed_in: true, ...(await members.accountOf(active.user.id)), csrf_token: csrf, signup };
    });

    auth.post("/auth/sign-up", { schema: { body: SCHEMAS.signUp } }, async (req, reply) => {
      const result = await sessions.signUp(req.body as SignUpInput, req.ip, req.id, cookies.read(req, "session"));
      reply.code(201);
      return signedIn(req, reply, result);
    });

    auth.post("/auth/sign-in", { schema: { body: SCHEMAS.signIn } }, async (req, reply) => {
      const { email: address, password: given } = req.body as { email: string; password: string };
      return signedIn(req, reply, await sessions.signIn(address, given, req.ip, cookies.read(req, "session")));
    });

    auth.post("/auth/sign-out", async (req, reply) => {
      await sessions.signOut(cookies.read(req, "session"));
      cookies.clear(req, reply, "session");
      return reply.code(204).send();
    });

    // Answers the new session like a sign-in: the old cookie and CSRF token are spent.
    auth.post("/auth/password", { schema: { body: SCHEMAS.password } }, async (req, reply) => {
      const { current_password, new_password } = req.body as { current_password: string; new_password: string };
      return signedIn(req, reply, await sessions.changePassword(await session(req), current_password, new_password));
    });

    auth.post("/auth/token", { schema: { body: SCHEMAS.token } }, async (req) => {
      const { workspace_id, environment } = req.body as { workspace_id: string; environment: Environment };
      return sessions.exchange(await session(req), workspace_id, environment);
    });

    auth.get("/auth/invitations/:token", async (req) => members.previewInvitation((req.params as { token: string }).token));

    auth.post("/auth/invitations/accept", { schema: { body: SCHEMAS.accept } }, async (req) => {
      const active = await session(req);
      await members.acceptInvitation(active.user, (req.body as { token: string }).token, { id: req.id, ipAddress: req.ip ?? null });
      return { signed_in: true, ...(await members.accountOf(active.user.id)), csrf_token: cookies.read(req, "csrf"), signup: await sessions.signupState() };
    });
  });
}
