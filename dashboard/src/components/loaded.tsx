import type { ReactNode } from "react";
import type { RequestState } from "../api/use-request";
import { ErrorState } from "./error-state";
import { Loading } from "./loading";

interface LoadedProps<T> {
  state: Pick<RequestState<T>, "data" | "error" | "reload">;
  /** What is loading, for the messages: "members" gives "Loading members…", "Could not load members". */
  what: string;
  compact?: boolean;
  children: (data: T) => ReactNode;
}

/** A request's three faces: its error with Retry, a spinner until the data arrives, then the data. */
export function Loaded<T>({ state, what, compact = false, children }: LoadedProps<T>) {
  if (state.error !== undefined) return <ErrorState error={state.error} title={`Could not load ${what}`} onRetry={state.reload} compact={compact} />;
  if (state.data === undefined) return <Loading label={`Loading ${what}…`} />;
  return children(state.data);
}
