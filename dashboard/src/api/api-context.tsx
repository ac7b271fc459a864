import { createContext, use, useCallback, useMemo, useState, type ReactNode } from "react";
import { APIError, type Mailroom, type WorkspaceMembership } from "mailroom";
import { useSession } from "../auth/session";
import type { Environment } from "../lib/environment";
import { forgetPageTrail } from "../lib/page-trail";
import { loadEnvironment, loadWorkspaceId, saveEnvironment, saveWorkspaceId } from "../lib/preferences";
import { callApi, tokens, type Scope } from "./client";

/** What a page needs to call /v1: its scope, and a way to run SDK calls in it. */
export interface Api extends Scope {
  /**
   * Runs SDK calls with a token for this workspace and `environment` (default: the one chosen in
   * the top bar), renewing the token once on a 401.
   */
  call: <T>(operation: (mr: Mailroom) => PromiseLike<T>, environment?: Environment) => Promise<T>;
}

/** The chosen workspace and environment, and how to change them (the top bar's switches). */
export interface WorkspaceChoice {
  workspace: WorkspaceMembership;
  workspaces: WorkspaceMembership[];
  environment: Environment;
  setEnvironment: (environment: Environment) => void;
  setWorkspace: (workspaceId: string) => void;
}

// The token exchange's (POST /auth/token) answers that mean the session cannot have a token for
// the chosen workspace any more (docs/dashboard.md).
const TOKEN_REFUSALS: ReadonlySet<number> = new Set([401, 403, 404]);

// Two contexts, so that a page that only calls the API (and reloads when `Api` changes) is not
// reloaded when the workspace's name or the session around it changes.
const ApiContext = createContext<Api | null>(null);
const WorkspaceContext = createContext<WorkspaceChoice | null>(null);

/** Provides the API for signed-in pages. `workspaces` must not be empty. */
export function ApiProvider({ workspaces, children }: { workspaces: WorkspaceMembership[]; children: ReactNode }) {
  const { refresh } = useSession();
  const [chosenId, setChosenId] = useState(loadWorkspaceId);
  const [environment, setEnvironmentState] = useState(loadEnvironment);
  // A remembered workspace the user has since left falls back to their first one.
  const workspace = workspaces.find((candidate) => candidate.id === chosenId) ?? (workspaces[0] as WorkspaceMembership);
  const workspaceId = workspace.id;

  // The session can no longer mint a token for this workspace: ask the server what the session
  // is now, which moves the page along (to another workspace, the no-workspace page, or sign-in).
  // Only the token exchange's refusals reach here (callApi), never a /v1 answer, so a 404 is the
  // exchange's `not_found` for a workspace the session is no longer a member of (removed from it,
  // or it was deleted), not a message or template that is missing; 401 is a session that ended
  // (signed out elsewhere, expired), 403 a refused CSRF token.
  const onTokenRefused = useCallback(
    (error: unknown) => {
      if (error instanceof APIError && TOKEN_REFUSALS.has(error.status)) refresh();
    },
    [refresh],
  );

  const api = useMemo<Api>(
    () => ({
      workspaceId,
      environment,
      call: (operation, callEnvironment = environment) => callApi({ workspaceId, environment: callEnvironment }, operation, onTokenRefused),
    }),
    [workspaceId, environment, onTokenRefused],
  );

  const setEnvironment = useCallback(
    (next: Environment) => {
      forgetPageTrail();
      saveEnvironment(next);
      setEnvironmentState(next);
      // Exchange the other environment's token now rather than on the pages' first calls; a
      // failure here shows up on those calls, so it is not reported twice.
      tokens.token(workspaceId, next).catch(() => undefined);
    },
    [workspaceId],
  );
  const setWorkspace = useCallback((next: string) => {
    forgetPageTrail();
    saveWorkspaceId(next);
    setChosenId(next);
  }, []);
  const choice = useMemo<WorkspaceChoice>(
    () => ({ workspace, workspaces, environment, setEnvironment, setWorkspace }),
    [workspace, workspaces, environment, setEnvironment, setWorkspace],
  );

  return (
    <ApiContext value={api}>
      <WorkspaceContext value={choice}>{children}</WorkspaceContext>
    </ApiContext>
  );
}

export function useApi(): Api {
  const api = use(ApiContext);
  if (!api) throw new Error("useApi() needs an <ApiProvider> above it.");
  return api;
}

/** The workspace choice where there is one (signed-in pages), else null (sign-in, invitations). */
export function useOptionalWorkspace(): WorkspaceChoice | null {
  return use(WorkspaceContext);
}

export function useWorkspace(): WorkspaceChoice {
  const choice = use(WorkspaceContext);
  if (!choice) throw new Error("useWorkspace() needs an <ApiProvider> above it.");
  return choice;
}
