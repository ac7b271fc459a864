import { lazy, Suspense, type ComponentType } from "react";
import { Redirect, Route, Switch, useLocation, useSearch } from "wouter";
import { ApiProvider } from "./api/api-context";
import { nextPath, signInPath } from "./auth/next-path";
import { SessionProvider, useSession } from "./auth/session";
import { AppShell } from "./components/app-shell";
import { Loading } from "./components/loading";
import { InvitationPage } from "./pages/invitation";
import { NoWorkspacePage } from "./pages/no-workspace";
import { NotFoundPage } from "./pages/not-found";
import { SignInPage } from "./pages/sign-in";
import { SignUpPage } from "./pages/sign-up";

/**
 * A signed-in page, loaded the first time it is opened: each is a chunk of its own in the build,
 * with what only it uses (the template editor's CodeMirror, the charts' uPlot), so that the first
 * load carries only React, the SDK, the shell and the signed-out pages (Vite's 500 kB warning is
 * the budget). Should the chunk fail to load (the dashboard was redeployed since the tab was
 * opened, and its old files are gone), the error boundary says so, with its Reload link.
 */
function page<Name extends string, Props extends object>(load: () => Promise<Record<Name, ComponentType<Props>>>, name: Name) {
  return lazy(async () => ({ default: (await load())[name] }));
}

const OverviewPage = page(() => import("./pages/overview"), "OverviewPage");
const MessagesPage = page(() => import("./pages/messages"), "MessagesPage");
const MessagePage = page(() => import("./pages/message"), "MessagePage");
const AnalyticsPage = page(() => import("./pages/analytics"), "AnalyticsPage");
const InboxPage = page(() => import("./pages/inbox"), "InboxPage");
const SuppressionsPage = page(() => import("./pages/suppressions"), "SuppressionsPage");
const TemplatesPage = page(() => import("./pages/templates"), "TemplatesPage");
const TemplatePage = page(() => import("./pages/templates/template"), "TemplatePage");
const WebhooksPage = page(() => import("./pages/webhooks"), "WebhooksPage");
const WebhookPage = page(() => import("./pages/webhooks/webhook"), "WebhookPage");
const DomainsPage = page(() => import("./pages/domains"), "DomainsPage");
const DomainPage = page(() => import("./pages/domains/domain"), "DomainPage");
const ApiKeysPage = page(() => import("./pages/api-keys"), "ApiKeysPage");
const RequestLogPage = page(() => import("./pages/request-log"), "RequestLogPage");
const RequestLogEntryPage = page(() => import("./pages/request-log/request"), "RequestLogEntryPage");
const SettingsPage = page(() => import("./pages/settings"), "SettingsPage");
const AuditLogPage = page(() => import("./pages/settings/audit-log"), "AuditLogPage");

/** Pages that need no session; every other path sends a signed-out visitor to sign in. */
function SignedOutRoutes() {
  const { session, signedOutByUser } = useSession();
  const [location] = useLocation();
  const search = useSearch();
  // A fresh install has no account to sign in with: its first visitor sets it up. Otherwise
  // come back here after signing in, unless the visitor just chose to sign out.
  const here = `${location}${search ? `?${search}` : ""}`;
  const entry = session.signup === "first_user" ? "/sign-up" : signedOutByUser ? "/sign-in" : signInPath(here);
  return (
    <Switch>
      <Route path="/sign-in" component={SignInPage} />
      <Route path="/sign-up" component={SignUpPage} />
      <Route path="/invitations/:token">{(params) => <InvitationPage token={params.token} />}</Route>
      <Route>
        <Redirect to={entry} replace />
      </Route>
    </Switch>
  );
}

function SignedInRoutes() {
  const { session } = useSession();
  const search = useSearch();
  return (
    <Switch>
      {/* Just signed in or up: go where the visitor was headed. */}
      <Route path="/sign-in">
        <Redirect to={nextPath(search, window.location.origin)} replace />
      </Route>
      <Route path="/sign-up">
        <Redirect to={nextPath(search, window.location.origin)} replace />
      </Route>
      {/* Outside the shell: accepting changes the workspaces the shell is built on. */}
      <Route path="/invitations/:token">{(params) => <InvitationPage token={params.token} />}</Route>
      <Route>
        {session.workspaces.length === 0 ? (
          <NoWorkspacePage />
        ) : (
          <ApiProvider workspaces={session.workspaces}>
            <AppShell>
              {/* While a page's chunk loads the first time; the top bar and navigation stay. */}
              <Suspense fallback={<Loading label="Loading the page…" />}>
                <Switch>
                  <Route path="/" component={OverviewPage} />
                  <Route path="/messages" component={MessagesPage} />
                  <Route path="/messages/:id">{(params) => <MessagePage id={params.id} />}</Route>
                  <Route path="/analytics" component={AnalyticsPage} />
                  <Route path="/inbox">{() => <InboxPage />}</Route>
                  <Route path="/inbox/:id">{(params) => <InboxPage id={params.id} />}</Route>
                  <Route path="/suppressions" component={SuppressionsPage} />
                  <Route path="/templates" component={TemplatesPage} />
                  <Route path="/templates/:slug">
                    {(params) => (
                      <Suspense fallback={<Loading label="Loading the editor…" />}>
                        <TemplatePage slug={params.slug} />
                      </Suspense>
                    )}
                  </Route>
                  <Route path="/webhooks" component={WebhooksPage} />
                  <Route path="/webhooks/:id">{(params) => <WebhookPage id={params.id} />}</Route>
                  <Route path="/domains" component={DomainsPage} />
                  <Route path="/domains/:id">{(params) => <DomainPage id={params.id} />}</Route>
                  <Route path="/developers/api-keys" component={ApiKeysPage} />
                  <Route path="/developers/request-log" component={RequestLogPage} />
                  <Route path="/developers/request-log/:id">{(params) => <RequestLogEntryPage id={params.id} />}</Route>
                  <Route path="/developers">
                    <Redirect to="/developers/api-keys" replace />
                  </Route>
                  <Route path="/settings" component={SettingsPage} />
                  <Route path="/settings/audit-log" component={AuditLogPage} />
                  <Route component={NotFoundPage} />
                </Switch>
              </Suspense>
            </AppShell>
          </ApiProvider>
        )}
      </Route>
    </Switch>
  );
}

function Routes() {
  const { session } = useSession();
  return session.signed_in ? <SignedInRoutes /> : <SignedOutRoutes />;
}

export function App() {
  return (
    <SessionProvider>
      <Routes />
    </SessionProvider>
  );
}
