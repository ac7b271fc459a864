import { randomBytes } from "node:crypto";
import { digestSecret, generateSecret } from "../domain/api-key-secret.js";
import type { Clock } from "../domain/clock.js";
import { displayName } from "../domain/display-name.js";
import { ConflictError, DomainError, InvalidCredentialsError, NotFoundError, NotSignedInError, UniqueViolation, ValidationError } from "../domain/errors.js";
import type { Environment } from "../domain/environments.js";
import { fixedWindow } from "../domain/fixed-window.js";
import { newId } from "../domain/ids.js";
import type { Role } from "../domain/roles.js";
import type { Repositories } from "../db/repositories/index.js";
import type { SessionRow } from "../db/repositories/sessions.js";
import { UQ_USER_EMAIL, type UserRow } from "../db/repositories/users.js";
import type { MembersService } from "./members.js";
import { invitationEmailMismatch, normaliseEmail } from "./members.js";
import { DUMMY_PASSWORD_HASH, PASSWORD_LIMITS, hashPassword, verifyPassword } from "./passwords.js";
import type { SignInThrottle } from "./sign-in-throttle.js";
import type { components } from "../../generated/v1.js";

type Account = components["schemas"]["Account"];

/** Who may sign up once the first user exists (SIGNUP): invited addresses only, or anyone. */
export type SignupPolicy = "invitation" | "open";
export type SignupState = "first_user" | "open" | "invitation_only";

/**
 * Session lifetimes (OWASP Session Management): idle expiry renewed by use, and an absolute cap
 * after which the user signs in again whatever their activity. Access tokens are short so that
 * a leaked one is worth little; the page renews them from the session.
 */
export const SESSION_POLICY = { idleMs: 7 * 24 * 3600 * 1000, absoluteMs: 30 * 24 * 3600 * 1000, tokenMs: 15 * 60 * 1000 } as const;

/**
 * Token exchanges a session may make in a fixed window, counted in the database like the API's
 * rate limits (every node shares them). The page needs about one per workspace and environment
 * every 10 minutes; the budget is far above that and only stops a stolen cookie (or a page gone
 * wrong) from minting tokens, and writing their rows, without limit.
 */
export const EXCHANGE_POLICY = { perSession: 60, windowMs: 60 * 1000 } as const;

export interface SignUpInput {
  email: string;
  password: string;
  name?: string | undefined;
  workspace_name?: string | undefined;
  invitation_token?: string | undefined;
}

export interface SignedIn {
  /** The cookie's value: shown to the browser once, stored as a digest. */
  sessionSecret: string;
  account: Account;
}

export interface ActiveSession {
  session: SessionRow;
  user: UserRow;
}

export interface AccessToken {
  token: string;
  expires_at: string;
  expires_in: number;
  workspace_id: string;
  environment: Environment;
  role: Role;
}

/** Dashboard sign-up, sign-in and sessions, and the exchange of a session for access tokens. */
export class SessionsService {
  constructor(
    private readonly repositories: Pick<Repositories, "users" | "members" | "sessions" | "rateLimits" | "transaction">,
    private readonly members: MembersService,
    private readonly throttle: SignInThrottle,
    private readonly signupPolicy: SignupPolicy,
    private readonly clock: Clock,
  ) {}

  async signupState(): Promise<SignupState> {
    if (!(await this.repositories.users.any())) return "first_user";
    return this.signupPolicy === "open" ? "open" : "invitation_only";
  }

  /**
   * `client` is the caller's network address: sign-up attempts count against its sign-in budget.
   * `requestId` names the request in the audit event of joining through an invitation.
   */
  async signUp(input: SignUpInput, client: string, requestId: string, replacing?: string): Promise<SignedIn> {
    // Counted first, whatever the outcome (a success gives it back): a loop of sign-ups must not
    // burn 0.3 s of a core each, nor ask without limit which addresses have an account.
    const reservation = await this.throttle.reserve({ client });
    checkPassword(input.password, "/password");
    const email = input.email.trim();
    const emailNormalized = normaliseEmail(email);
    // Refused before hashing, and before the address is looked up.
    await this.assertMaySignUp(input, emailNormalized);
    const now = this.clock.now();
    const user: UserRow = { id: newId("user", now), email, email_normalized: emailNormalized, name: displayName(input.name), password_hash: await hashPassword(input.password), created_at: now, updated_at: now };
    await this.repositories.transaction(async (trx) => {
      if (input.invitation_token === undefined && this.signupPolicy !== "open") {
        // Again inside the transaction, where it can serialise: two first sign-ups racing must
        // not both pass. Checking users alone cannot (see migration 020); the claim can.
        if ((await this.repositories.users.any(trx)) || !(await this.repositories.users.claimFirst(user.id, now, trx))) throw signupClosed();
      }
      if (await this.repositories.users.findByEmail(emailNormalized, trx)) throw emailTaken(email);
      try {
        await this.repositories.users.insert(user, trx);
      } catch (error) {
        // Registered meanwhile by a simultaneous sign-up, which the read above could not see yet.
        if (error instanceof UniqueViolation && error.constraint === UQ_USER_EMAIL) throw emailTaken(email);
        throw error;
      }
      // Checks the invitation again under the transaction, and closes it.
      if (input.invitation_token !== undefined) await this.members.acceptInvitation(user, input.invitation_token, { id: requestId, ipAddress: client }, trx);
      else await this.members.createOwnedWorkspace(user.id, input.workspace_name?.trim() || "My workspace", trx);
    });
    await this.throttle.succeeded(reservation);
    return this.startSession(user.id, user.password_hash, replacing);
  }

  /**
   * With an invitation: it must be pending and for this address (a made-up token answers 404
   * invitation_not_found, never whether the address is registered). Without one: the first user
   * may always sign up; later ones only if sign-up is open.
   */
  private async assertMaySignUp(input: SignUpInput, emailNormalized: string): Promise<void> {
    if (input.invitation_token !== undefined) {
      const invitation = await this.members.pendingInvitation(input.invitation_token);
      if (invitation.email_normalized !== emailNormalized) throw invitationEmailMismatch(invitation.email);
      return;
    }
    if (this.signupPolicy === "open" || !(await this.repositories.users.any())) return;
    throw signupClosed();
  }

  /**
   * `client` is the caller's network address, for throttling password guessing; `replacing`, the
   * secret of the session the browser had, which the new one replaces (see startSession).
   */
  async signIn(email: string, password: string, client: string, replacing?: string): Promise<SignedIn> {
    const emailNormalized = normaliseEmail(email);
    // Counted before the password is checked (SignInThrottle), so parallel guesses cannot all pass.
    const reservation = await this.throttle.reserve({ email: emailNormalized, client });
    const user = await this.repositories.users.findByEmail(emailNormalized);
    // An unknown address costs the same hash as a known one: the answer and its timing match.
    const valid = await verifyPassword(password, user?.password_hash ?? DUMMY_PASSWORD_HASH);
    if (!user || !valid) throw new InvalidCredentialsError();
    // Still the password just checked? A change meanwhile (during the 0.3 s of scrypt) answers
    // as a wrong password, and the attempt stays counted.
    const signedIn = await this.startSession(user.id, user.password_hash, replacing);
    await this.throttle.succeeded(reservation);
    return signedIn;
  }

  /** The session a cookie names, if it is live; null otherwise. */
  async resolve(sessionSecret: string | undefined): Promise<ActiveSession | null> {
    if (!sessionSecret) return null;
    const session = await this.repositories.sessions.findByDigest(digestSecret(sessionSecret));
    const now = this.clock.now();
    if (!session || session.expires_at <= now || session.absolute_expires_at <= now) return null;
    const user = await this.repositories.users.find(session.user_id);
    return user ? { session, user } : null;
  }

  async require(sessionSecret: string | undefined): Promise<ActiveSession> {
    const active = await this.resolve(sessionSecret);
    if (!active) throw new NotSignedInError();
    return active;
  }

  async signOut(sessionSecret: string | undefined): Promise<void> {
    const active = await this.resolve(sessionSecret);
    if (active) await this.repositories.sessions.delete(active.session.id);
  }

  /**
   * Changes the password and signs out every session of the user, this one too, then starts a
   * new one for the caller (OWASP Session Management: renew the session on re-authentication): a
   * copy of this session's cookie taken before the change must not outlive it either.
   */
  async changePassword({ user }: ActiveSession, currentPassword: string, newPassword: string): Promise<SignedIn> {
    // The address's sign-in budget applies: a stolen session cookie must not make a way to guess
    // the password without limit.
    const reservation = await this.throttle.reserve({ email: user.email_normalized });
    if (!(await verifyPassword(currentPassword, user.password_hash))) {
      throw new DomainError("forbidden", "invalid_credentials", "Wrong password", "The current password is not correct.");
    }
    await this.throttle.succeeded(reservation);
    checkPassword(newPassword, "/new_password");
    const passwordHash = await hashPassword(newPassword);
    // One transaction: the new password never stands beside sessions opened with the old one.
    // Under the user's row lock, the password must still be the one just checked: of two changes
    // that checked it at once, the second would otherwise overwrite the first and sign its caller out.
    await this.repositories.transaction(async (trx) => {
      if ((await this.repositories.users.lockPasswordHash(user.id, trx)) !== user.password_hash) throw passwordChanged();
      await this.repositories.users.updatePasswordHash(user.id, passwordHash, this.clock.now(), trx);
      await this.repositories.sessions.deleteAllOfUser(user.id, trx);
    });
    return this.startSession(user.id, passwordHash);
  }

  /** A user access token for one workspace (that the user belongs to) and one environment. */
  async exchange({ session, user }: ActiveSession, workspaceId: string, environment: Environment): Promise<AccessToken> {
    // Counted first, refusals too: asking about workspaces one is not in uses the budget as well.
    const now = this.clock.now();
    const window = fixedWindow(now, EXCHANGE_POLICY.windowMs);
    const counter = { bucket: `token-exchange:session:${session.id}:${window.start}`, limit: EXCHANGE_POLICY.perSession };
    if (!(await this.repositories.rateLimits.incrementWithinLimits([counter], window.end))) throw tooManyExchanges(window.retryAfterSeconds);
    const membership = await this.repositories.members.find(workspaceId, user.id);
    if (!membership) throw new NotFoundError("workspace", workspaceId);
    const token = generateSecret(environment, "user_token");
    const expiresAt = Math.min(now + SESSION_POLICY.tokenMs, session.absolute_expires_at);
    await this.repositories.sessions.insertToken({ id: newId("accessToken", now), digest: digestSecret(token), session_id: session.id, user_id: user.id, workspace_id: workspaceId, environment, created_at: now, expires_at: expiresAt });
    // Using the dashboard keeps the session alive, up to its absolute cap.
    await this.repositories.sessions.extend(session.id, Math.min(now + SESSION_POLICY.idleMs, session.absolute_expires_at));
    return { token, expires_at: new Date(expiresAt).toISOString(), expires_in: Math.floor((expiresAt - now) / 1000), workspace_id: workspaceId, environment, role: membership.role };
  }

  async prune(): Promise<number> {
    return this.repositories.sessions.pruneExpired(this.clock.now());
  }

  /**
   * Starts a session for a user authenticated by `passwordHash`, only if that is still their
   * password: checked and inserted under the user's row lock. A password change signs out every
   * session it finds when it commits; a sign-in that verified the old password just before (or a
   * second change racing the first) would otherwise insert its session after that, and outlive
   * the change that was meant to lock it out.
   *
   * `replacing` is the session the browser presented, whose cookie the new one overwrites: it is
   * ended with its tokens in the same transaction. The browser can no longer use it, and a copy
   * of its cookie taken before (on a shared computer, say) would otherwise stay valid for days.
   */
  private async startSession(userId: string, passwordHash: string, replacing?: string): Promise<SignedIn> {
    const now = this.clock.now();
    const sessionSecret = randomBytes(32).toString("base64url");
    await this.repositories.transaction(async (trx) => {
      if ((await this.repositories.users.lockPasswordHash(userId, trx)) !== passwordHash) throw new InvalidCredentialsError();
      if (replacing) await this.repositories.sessions.deleteByDigest(digestSecret(replacing), trx);
      await this.repositories.sessions.insert({ id: newId("session", now), digest: digestSecret(sessionSecret), user_id: userId, created_at: now, expires_at: now + SESSION_POLICY.idleMs, absolute_expires_at: now + SESSION_POLICY.absoluteMs }, trx);
    });
    return { sessionSecret, account: await this.members.accountOf(userId) };
  }
}

const tooManyExchanges = (retryAfterSeconds: number) =>
  new DomainError("rate_limited", "too_many_token_exchanges", "Too many token exchanges", `This session asked for more than ${EXCHANGE_POLICY.perSession} access tokens in a minute; try again in ${retryAfterSeconds} s.`, { retryAfterSeconds });
const emailTaken = (email: string) => new ConflictError("email_taken", "Email already registered", `An account for ${email} exists: sign in instead.`);
const passwordChanged = () => new ConflictError("password_changed", "Password changed meanwhile", "The password was changed by another request while this one was being checked, and every session was signed out: sign in with the new password.");
const signupClosed = () => new DomainError("forbidden", "signup_closed", "Sign-up needs an invitation", "This Mailroom accepts new accounts by invitation only: ask a workspace admin for an invitation link.");

/** NIST SP 800-63B: length is what matters; no composition rules. */
function checkPassword(password: string, pointer: string): void {
  const length = [...password].length;
  if (length < PASSWORD_LIMITS.min || length > PASSWORD_LIMITS.max) {
    throw ValidationError.field(pointer, `must be ${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters long`);
  }
}
