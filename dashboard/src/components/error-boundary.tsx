import { Component, type ErrorInfo, type ReactNode } from "react";
import { AuthLayout } from "./auth-layout";

interface State {
  error: unknown;
}

/**
 * The app's last resort: an error thrown while rendering (a bug, or the browser refusing a
 * navigation) would otherwise unmount everything and leave a blank page. It says so, with the
 * error's message to quote, and a link that loads the dashboard afresh at its overview (the address
 * that failed may fail again).
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
          <p>The dashboard stopped on an error. Nothing you saved is lost.</p>
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
