import {
  DependencyList,
  useCallback,
  useEffect,
  useRef,
  useState,
} from 'react';

export interface PollingState<T> {
  value?: T;
  error?: Error;
  loading: boolean;
  /** Fetches again now (e.g. after a deploy). */
  refresh: () => void;
}

/**
 * Calls `fetch` now and then every `intervalMs`, so that a card follows status changes without a
 * page reload. A failure keeps the last value, and doubles the wait up to `maxIntervalMs` (back
 * off from a struggling backend); the next success goes back to `intervalMs`.
 */
export function usePolling<T>(
  fetch: () => Promise<T>,
  deps: DependencyList,
  options?: { intervalMs?: number; maxIntervalMs?: number },
): PollingState<T> {
  const intervalMs = options?.intervalMs ?? 5_000;
  const maxIntervalMs = options?.maxIntervalMs ?? 60_000;
  const fetchRef = useRef(fetch);
  fetchRef.current = fetch;
  const [state, setState] = useState<Omit<PollingState<T>, 'refresh'>>({
    loading: true,
  });
  const [generation, setGeneration] = useState(0);

  // A change of what is fetched (another entity, another filter) must not show the old answer.
  const depsKey = useRef<DependencyList>(deps);
  const depsChanged =
    deps.length !== depsKey.current.length ||
    deps.some((d, i) => !Object.is(d, depsKey.current[i]));
  depsKey.current = deps;
  if (depsChanged && (state.value !== undefined || state.error !== undefined)) {
    setState({ loading: true });
  }

  useEffect(() => {
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let delay = intervalMs;
    const run = async () => {
      // Hidden tabs do not poll; they catch up when shown again.
      if (
        typeof document !== 'undefined' &&
        document.visibilityState === 'hidden'
      ) {
        timer = setTimeout(run, intervalMs);
        return;
      }
      try {
        const value = await fetchRef.current();
        if (cancelled) return;
        setState({ value, loading: false });
        delay = intervalMs;
      } catch (error) {
        if (cancelled) return;
        setState(previous => ({
          value: previous.value,
          error: error as Error,
          loading: false,
        }));
        delay = Math.min(delay * 2, maxIntervalMs);
      }
      if (!cancelled) timer = setTimeout(run, delay);
    };
    run();
    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, generation, intervalMs, maxIntervalMs]);

  const refresh = useCallback(() => setGeneration(g => g + 1), []);
  return { ...state, refresh };
}
