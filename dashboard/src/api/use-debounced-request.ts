import { useEffect, useEffectEvent, useRef, useState } from "react";

export interface DebouncedState<T> {
  /** The last answer, kept while a newer request waits or runs (a preview does not blank out). */
  data: T | undefined;
  /** The last request's error, until a request succeeds; `data` is then the answer before it. */
  error: unknown;
  /** A request for the current key waits out its delay or runs. */
  pending: boolean;
}

/**
 * Runs `load` once `key` has stayed the same for `delayMs` (typing pauses), aborting the request
 * for an older key, so an answer never lands on the wrong input and each pause costs one request.
 * The first request runs at once: there is nothing to show until it answers.
 */
export function useDebouncedRequest<T>(load: (signal: AbortSignal) => Promise<T>, key: string, delayMs: number): DebouncedState<T> {
  const [settled, setSettled] = useState<{ key: string | undefined; data: T | undefined; error: unknown }>({ key: undefined, data: undefined, error: undefined });
  const run = useEffectEvent(load);
  const first = useRef(true);
  useEffect(() => {
    const controller = new AbortController();
    const wait = first.current ? 0 : delayMs;
    first.current = false;
    const timer = setTimeout(() => {
      run(controller.signal).then(
        (data) => {
          if (!controller.signal.aborted) setSettled({ key, data, error: undefined });
        },
        (error: unknown) => {
          if (!controller.signal.aborted) setSettled((previous) => ({ key, data: previous.data, error }));
        },
      );
    }, wait);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [key, delayMs]);
  return { data: settled.data, error: settled.error, pending: settled.key !== key };
}
