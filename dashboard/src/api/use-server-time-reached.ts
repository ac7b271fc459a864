import { useEffect, useReducer } from "react";
import { serverClock } from "./server-clock";

// setTimeout fires at once when asked to wait past 2^31 - 1 ms (about 24.8 days), and a message
// may be scheduled 30 days ahead: a longer wait is made of waits of a day.
const LONGEST_WAIT_MS = 86_400_000;

/**
 * Whether the server's clock (serverClock) has reached `instant` (RFC 3339; null for never),
 * rendering the component again when it does, rather than when some answer next comes.
 */
export function useServerTimeReached(instant: string | null): boolean {
  const [wakes, wake] = useReducer((count: number) => count + 1, 0);
  const at = Date.parse(instant ?? "");
  const reached = at <= serverClock.now();
  useEffect(() => {
    if (Number.isNaN(at) || reached) return;
    // On waking, the render looks again: the reading of the server's clock may have moved, or the
    // wait may have been cut to a day. Not reached yet, `wakes` sets the next wait.
    const timer = setTimeout(wake, Math.min(at - serverClock.now(), LONGEST_WAIT_MS));
    return () => clearTimeout(timer);
  }, [at, reached, wakes]);
  return reached;
}
