import { Component, type ErrorInfo, type ReactNode } from "react";
import { AuthLayout } from "./auth-layout";

interface State {
  error: unknown;
}

/**
 * A page's code that could not be fetched (app.tsx loads each page on first use): after a
 * redeploy the tab's old file names are gone. Chromium, Firefox and Safari word it differently;
 * Vite's preloading of a chunk's dependencies too.
 */
function isMissingCode(error: unknown): boolean {
  return error instanceof Error && /dynamically imported module|Importing a module script failed|Unable to preload/i.test(error.message);
}

/**
 * The app's last resort: an error thrown while rendering (a bug, or the browser refusing a
 * navigation) would otherwise unmount everything and leave a blank page. It says so, with the
 * error's message to quote, and a link that loads the dashboard afresh at its overview (the address
 * that failed may fail again). A page whose code could not be fetched gets the same page, saying
 * that a newer version of the dashboard may be out: the reload fetches it.
 */
export class ErrorBoundary extends Component<{ children: ReactNode }, State> {
  override state: State = { error: undefined };

  static getDerivedStateFromError(error: unknown): State {
    return { error: error ?? new Error("Unknown error") };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    console.error("The dashboard stopped on an error", error, info.componentStack);
  }

  override render(): ReactNode {
    const { error } = this.state;
    if (error === undefined) return this.props.children;
    return (
      <AuthLayout title="Something went wrong">
        <div role="alert" data-testid="app-error">
          {isMissingCode(error) ? (
            <p>
              Part of the dashboard could not be loaded: a newer version of Mailroom may have been installed since this page was opened, or the
              connection dropped. Reload the dashboard to get the current version. Nothing you saved is lost.
            </p>
          ) : (
            <p>The dashboard stopped on an error. Nothing you saved is lost.</p>
          )}
          <p className="muted">
            <code className="break">{error instanceof Error ? error.message : String(error)}</code>
          </p>
          <p>
            {/* A full page load, not a client-side route: the app's state is what failed. */}
            <a href="/" className="button button--primary">
              Reload the dashboard
            </a>
          </p>
        </div>
      </AuthLayout>
    );
  }
}
