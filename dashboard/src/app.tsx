import { lazy, Suspense } from "react";
import { Redirect, Route, Switch, useLocation, useSearch } from "wouter";
import { ApiProvider } from "./api/api-context";
import { nextPath, signInPath } from "./auth/next-path";
import { SessionProvider, useSession } from "./auth/session";
import { AppShell } from "./components/app-shell";
import { Loading } from "./components/loading";
import { AnalyticsPage } from "./pages/analytics";
import { ApiKeysPage } from "./pages/api-keys";
import { DomainsPage } from "./pages/domains";
import { DomainPage } from "./pages/domains/domain";
import { InboxPage } from "./pages/inbox";
import { InvitationPage } from "./pages/invitation";
import { MessagePage } from "./pages/message";
import { MessagesPage } from "./pages/messages";
import { NoWorkspacePage } from "./pages/no-workspace";
import { NotFoundPage } from "./pages/not-found";
import { OverviewPage } from "./pages/overview";
import { RequestLogPage } from "./pages/request-log";
import { RequestLogEntryPage } from "./pages/request-log/request";
import { SettingsPage } from "./pages/settings";
import { AuditLogPage } from "./pages/settings/audit-log";
import { SignInPage } from "./pages/sign-in";
import { SignUpPage } from "./pages/sign-up";
import { SuppressionsPage } from "./pages/suppressions";
import { TemplatesPage } from "./pages/templates";
import { WebhooksPage } from "./pages/webhooks";
import { WebhookPage } from "./pages/webhooks/webhook";

// The template editor brings CodeMirror, which is most of the app's weight: loaded on first use.
const TemplatePage = lazy(() => import("./pages/templates/template").then((module) => ({ default: module.TemplatePage })));

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
