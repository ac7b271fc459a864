import { useCallback, useEffect, useEffectEvent, useRef, useState, type DependencyList } from "react";
import type { PageBody } from "mailroom";

export interface RequestState<T> {
  data: T | undefined;
  error: unknown;
  /** True until the request for the current dependencies has settled (also while reloading). */
  loading: boolean;
  /** Runs the request again (a Retry button, or after a change elsewhere). */
  reload: () => void;
  /**
   * Changes the loaded data in place, e.g. with what a mutation answered, without a reload. Only
   * while the data is still for the deps it was for when this `update` was rendered: take it when
   * the mutation begins, so that an answer arriving after a switch changes nothing.
   */
  update: (change: (data: T) => T) => void;
}

interface Settled<T> {
  deps: DependencyList;
  attempt: number;
  data: T | undefined;
  error: unknown;
}

function sameDeps(a: DependencyList, b: DependencyList): boolean {
  return a.length === b.length && a.every((value, index) => Object.is(value, b[index]));
}

/**
 * Loads something when the component mounts and again whenever `deps` change, like an effect;
 * a change of deps aborts the request under way, so a slow old answer never replaces a newer
 * one. Whether it is loading is derived from which deps the last answer was for.
 */
export function useRequest<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList): RequestState<T> {
  const [attempt, setAttempt] = useState(0);
  const [settled, setSettled] = useState<Settled<T>>();
  const run = useEffectEvent(load);

  useEffect(() => {
    const controller = new AbortController();
    const settle = (data: T | undefined, error: unknown) => {
      if (!controller.signal.aborted) setSettled({ deps, attempt, data, error });
    };
    run(controller.signal).then(
      (data) => settle(data, undefined),
      (error: unknown) => settle(undefined, error),
    );
    return () => controller.abort();
    // The caller's deps are this hook's deps (checked at the call site: see eslint.config.js).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, attempt]);

  const current = settled !== undefined && sameDeps(settled.deps, deps) ? settled : undefined;
  const reload = useCallback(() => setAttempt((value) => value + 1), []);
  // An update is for the data this render shows (a save's answer is about the record the page
  // showed when the save began): one that lands once the data is for other deps (another
  // workspace, environment or record) is dropped rather than written over that data. Same deps
  // by value, so a reload of the same record in the meantime still takes it.
  const shownDeps = current?.deps;
  const update = useCallback(
    (change: (data: T) => T) => {
      setSettled((value) =>
        value?.data === undefined || shownDeps === undefined || !sameDeps(value.deps, shownDeps) ? value : { ...value, data: change(value.data) },
      );
    },
    [shownDeps],
  );
  return {
    // A reload keeps showing the previous answer until the new one arrives.
    data: current?.data,
    error: current?.attempt === attempt ? current.error : undefined,
    loading: current?.attempt !== attempt,
    reload,
    update,
  };
}

export interface PagedState<Item> extends RequestState<PageBody<Item>> {
  /** 1 for the first page. */
  pageNumber: number;
  hasPrevious: boolean;
  hasNext: boolean;
  next: () => void;
  previous: () => void;
}

/**
 * Where a paged list keeps the cursors of the pages it went past (the message log: in the
 * address, so that a reload, Back and Forward keep the page). Whoever keeps them starts again
 * from the first page when the list's filters change.
 */
export interface CursorTrail {
  cursors: readonly string[];
  go: (cursors: string[]) => void;
}

/**
 * One page of a cursor-paginated list, with Next and Previous. The API's cursors only go
 * forward, so the cursors of the pages already seen are kept on a stack: Previous pops it.
 * New deps (other filters) start again from the first page. The stack is kept in the component
 * unless a `trail` keeps it.
 */
export function usePaged<Item>(
  load: (after: string | undefined, signal: AbortSignal) => Promise<PageBody<Item>>,
  deps: DependencyList,
  trail?: CursorTrail,
): PagedState<Item> {
  const [stack, setStack] = useState<{ deps: DependencyList; cursors: readonly string[] }>({ deps, cursors: [] });
  const cursors = trail ? trail.cursors : sameDeps(stack.deps, deps) ? stack.cursors : [];
  const go = (next: string[]) => (trail ? trail.go(next) : setStack({ deps, cursors: next }));
  const after = cursors.at(-1);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the caller's deps, checked at its call site
  const page = useRequest((signal) => load(after, signal), [...deps, after]);
  const nextCursor = page.data?.has_more ? page.data.next_cursor : null;
  return {
    ...page,
    pageNumber: cursors.length + 1,
    hasPrevious: cursors.length > 0,
    hasNext: !page.loading && nextCursor !== null,
    next: () => {
      if (nextCursor !== null) go([...cursors, nextCursor]);
    },
    previous: () => go(cursors.slice(0, -1)),
  };
}

export interface ActionState<Args extends unknown[]> {
  /** Runs the action; its error is kept in `error` rather than thrown. */
  run: (...args: Args) => Promise<void>;
  pending: boolean;
  error: unknown;
  reset: () => void;
}

/**
 * A user-triggered request (a button, a form): `pending` disables its button while it runs, and
 * a failure lands in `error` for the form to show. Success effects belong inside `action`.
 */
export function useAction<Args extends unknown[]>(action: (...args: Args) => Promise<void>): ActionState<Args> {
  const [state, setState] = useState<{ pending: boolean; error: unknown }>({ pending: false, error: undefined });
  // The button that started it is disabled while it runs, which sends the keyboard's focus to the
  // page's <body>; once it has settled, focus goes back to that button (as a <dialog> gives it
  // back to the button that opened it), unless it has gone elsewhere meanwhile or the button has.
  const started = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const element = started.current;
    if (state.pending || element === null) return;
    started.current = null;
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (lost && element.isConnected) element.focus();
  }, [state.pending]);
  const run = async (...args: Args) => {
    started.current = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
    setState({ pending: true, error: undefined });
    try {
      await action(...args);
      setState({ pending: false, error: undefined });
    } catch (error) {
      setState({ pending: false, error });
    }
  };
  const reset = useCallback(() => setState({ pending: false, error: undefined }), []);
  return { run, pending: state.pending, error: state.error, reset };
}
