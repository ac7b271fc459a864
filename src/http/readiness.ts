/** Readiness: false while starting and from the moment shutdown begins. */
export interface Lifecycle {
  ready: boolean;
}

export const NOT_READY_DETAIL = "Not ready: the server is starting, draining for shutdown, or its database does not answer.";

/** Ready to take work: started, not shutting down, and its database answers. */
export async function isReady(lifecycle: Lifecycle, ping: () => Promise<void>): Promise<boolean> {
  return lifecycle.ready && (await ping().then(() => true, () => false));
}
