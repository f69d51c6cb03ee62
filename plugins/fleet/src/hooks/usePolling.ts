import { configApiRef, useApiHolder } from '@backstage/core-plugin-api';
import { signalApiRef } from '@backstage/plugin-signals-react';
import type { FleetSignalMessage } from '@cnp/plugin-fleet-common';
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

/** Polling when nothing else refreshes: the slow fallback behind the signals. */
export const DEFAULT_POLL_INTERVAL_MS = 60_000;
/** Signals that arrive together (a cascade, a release's steps) make one fetch. */
const SIGNAL_COALESCE_MS = 150;

/** The Backstage signals that make the data stale. */
export interface SignalSubscription {
  /** Channels to listen on (`fleetSignalChannels`). */
  channels: string[];
  /** Whether a message concerns this data (default: every message does). */
  accepts?: (message: FleetSignalMessage) => boolean;
}

/**
 * Fetches now, then again whenever a Backstage signal says the data changed (Fleet publishes one
 * for every committed status change), and every `intervalMs` as a fallback for signals missed or
 * unavailable: `fleet.frontend.pollInterval` seconds (default 60; 0 polls never, signals only),
 * unless the caller sets it. A failure keeps the last value, and doubles the wait up to
 * `maxIntervalMs` (back off from a struggling backend); the next success goes back to
 * `intervalMs`. A hidden tab fetches nothing; it catches up when shown again.
 */
export function usePolling<T>(
  fetch: () => Promise<T>,
  deps: DependencyList,
  options?: {
    intervalMs?: number;
    maxIntervalMs?: number;
    signals?: SignalSubscription;
  },
): PollingState<T> {
  const apis = useApiHolder();
  const configured = apis
    .get(configApiRef)
    ?.getOptionalNumber('fleet.frontend.pollInterval');
  const intervalMs =
    options?.intervalMs ??
    (configured !== undefined ? configured * 1000 : DEFAULT_POLL_INTERVAL_MS);
  const maxIntervalMs = Math.max(
    options?.maxIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    intervalMs,
  );
  const signalApi = apis.get(signalApiRef);
  const fetchRef = useRef(fetch);
  fetchRef.current = fetch;
  const acceptsRef = useRef(options?.signals?.accepts);
  acceptsRef.current = options?.signals?.accepts;
  const channelsKey = (options?.signals?.channels ?? []).join('\n');
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
    let running = false;
    /** Asked again while a fetch ran: its answer may predate the change. */
    let again = false;
    let missedWhileHidden = false;
    /** A signal's fetch is set: the next signals of the burst join it. */
    let signalPending = false;
    const hidden = () =>
      typeof document !== 'undefined' && document.visibilityState === 'hidden';
    /** Not now: hidden (fetch when shown again) or running (fetch again once it is done). */
    const deferred = () => {
      if (hidden()) missedWhileHidden = true;
      else if (running) again = true;
      else return false;
      return true;
    };
    const run = async () => {
      timer = undefined;
      signalPending = false;
      if (deferred()) return;
      running = true;
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
        delay = Math.min(Math.max(delay, 1_000) * 2, maxIntervalMs);
        if (intervalMs <= 0) {
          // No polling: retry a failure anyway, backing off, so that it does not stick.
          schedule(delay);
          return;
        }
      } finally {
        running = false;
      }
      if (again) {
        again = false;
        schedule(SIGNAL_COALESCE_MS);
      } else {
        schedule(delay);
      }
    };
    function schedule(ms: number) {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (cancelled) return;
      if (ms > 0) timer = setTimeout(run, ms);
    }
    const onVisible = () => {
      if (!hidden() && missedWhileHidden) {
        missedWhileHidden = false;
        schedule(0);
        run();
      }
    };
    const changed = () => {
      if (deferred()) return;
      // Coalesced: the first signal of a burst sets the fetch a moment later, the others join it.
      if (signalPending) return;
      signalPending = true;
      schedule(SIGNAL_COALESCE_MS);
    };
    const subscriptions = signalApi
      ? channelsKey
          .split('\n')
          .filter(Boolean)
          .map(channel =>
            signalApi.subscribe<FleetSignalMessage>(channel, message => {
              if (acceptsRef.current && !acceptsRef.current(message)) return;
              changed();
            }),
          )
      : [];
    if (typeof document !== 'undefined') {
      document.addEventListener('visibilitychange', onVisible);
    }
    if (hidden()) missedWhileHidden = true;
    else run();
    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
      subscriptions.forEach(s => s.unsubscribe());
      if (typeof document !== 'undefined') {
        document.removeEventListener('visibilitychange', onVisible);
      }
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, generation, intervalMs, maxIntervalMs, signalApi, channelsKey]);

  const refresh = useCallback(() => setGeneration(g => g + 1), []);
  return { ...state, refresh };
}
