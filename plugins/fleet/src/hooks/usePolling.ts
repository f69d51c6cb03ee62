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
import { PollSchedule } from './pollSchedule';

export interface PollingState<T> {
  value?: T;
  error?: Error;
  loading: boolean;
  /** Fetches again now (e.g. after a deploy). */
  refresh: () => void;
}

/** Polling when nothing else refreshes: the slow fallback behind the signals. */
export const DEFAULT_POLL_INTERVAL_MS = 60_000;

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
    const schedule = new PollSchedule<T>({
      fetch: () => fetchRef.current(),
      onValue: value => setState({ value, loading: false }),
      onError: error =>
        setState(previous => ({
          value: previous.value,
          error,
          loading: false,
        })),
      intervalMs,
      maxIntervalMs,
    });
    const onVisible = () => schedule.visibilityChanged();
    const subscriptions = signalApi
      ? channelsKey
          .split('\n')
          .filter(Boolean)
          .map(channel =>
            signalApi.subscribe<FleetSignalMessage>(channel, message => {
              if (acceptsRef.current && !acceptsRef.current(message)) return;
              schedule.changed();
            }),
          )
      : [];
    if (typeof document !== 'undefined') {
      document.addEventListener('visibilitychange', onVisible);
    }
    schedule.start();
    return () => {
      schedule.stop();
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
