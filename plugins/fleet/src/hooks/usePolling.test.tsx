import { ConfigReader } from '@backstage/config';
import { configApiRef } from '@backstage/core-plugin-api';
import type { SignalApi } from '@backstage/plugin-signals-react';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { TestApiProvider } from '@backstage/test-utils';
import {
  fleetSignalChannels,
  type FleetSignalMessage,
} from '@cnp/plugin-fleet-common';
import { act, renderHook, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { usePolling, type SignalSubscription } from './usePolling';

/**
 * Signals as the app's signal API delivers them, in memory: the real one needs the signals
 * backend's WebSocket (the end-to-end test goes through it).
 */
function inMemorySignals() {
  const subscribers = new Map<string, Set<(m: any) => void>>();
  const api: SignalApi = {
    subscribe(channel, onMessage) {
      if (!subscribers.has(channel)) subscribers.set(channel, new Set());
      subscribers.get(channel)!.add(onMessage as (m: any) => void);
      return {
        unsubscribe: () => subscribers.get(channel)?.delete(onMessage as any),
      };
    },
  };
  const publish = (channel: string, message: FleetSignalMessage) =>
    act(() => subscribers.get(channel)?.forEach(fn => fn(message)));
  const listening = (channel: string) => subscribers.get(channel)?.size ?? 0;
  return { api, publish, listening };
}

const degraded: FleetSignalMessage = {
  kind: 'deployment',
  entityRef: 'component:default/payments',
  changes: [
    {
      subject: 'd-1',
      from: 'DEPLOYED',
      to: 'DEGRADED',
      reason: 'CLUSTER_OFFLINE',
      cluster: 'east',
    },
  ],
};
const own = fleetSignalChannels.deploymentsOf('component:default/Payments');
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

function render(options: {
  signals?: ReturnType<typeof inMemorySignals>;
  config?: ConstructorParameters<typeof ConfigReader>[0];
  intervalMs?: number;
  subscription?: SignalSubscription;
}) {
  let calls = 0;
  const fetch = jest.fn(async () => {
    calls += 1;
    return calls;
  });
  const apis: Array<[any, any]> = [
    [configApiRef, new ConfigReader(options.config ?? {})],
  ];
  if (options.signals) apis.push([signalApiRef, options.signals.api]);
  const wrapper = ({ children }: { children: ReactNode }) => (
    <TestApiProvider apis={apis as any}>{children}</TestApiProvider>
  );
  const hook = renderHook(
    () =>
      usePolling(fetch, [], {
        intervalMs: options.intervalMs,
        signals: options.subscription,
      }),
    { wrapper },
  );
  return { ...hook, fetch };
}

describe('usePolling', () => {
  it('fetches again when a signal of its channels says the data changed, with polling off', async () => {
    const signals = inMemorySignals();
    const { result, fetch, unmount } = render({
      signals,
      config: { fleet: { frontend: { pollInterval: 0 } } },
      subscription: {
        channels: [own, fleetSignalChannels.clusters],
        accepts: m => m.kind !== 'cluster' || m.changes[0].subject === 'east',
      },
    });
    await waitFor(() => expect(result.current.value).toBe(1));
    await sleep(300);
    expect(fetch).toHaveBeenCalledTimes(1); // no polling

    // The entity ref's case does not matter: channels are lower case on both ends.
    await signals.publish(
      fleetSignalChannels.deploymentsOf('component:default/payments'),
      degraded,
    );
    await waitFor(() => expect(result.current.value).toBe(2));

    // Another component's channel, and a message the subscriber does not accept: nothing.
    await signals.publish(
      fleetSignalChannels.deploymentsOf('component:default/orders'),
      degraded,
    );
    await signals.publish(fleetSignalChannels.clusters, {
      kind: 'cluster',
      changes: [
        { subject: 'west', from: 'ONLINE', to: 'OFFLINE', reason: null },
      ],
    });
    await sleep(300);
    expect(fetch).toHaveBeenCalledTimes(2);

    // A burst (a cascade, a release's steps) is one fetch: sent in one go, so that a slow
    // machine cannot spread it over more than the coalescing window.
    await Promise.all([
      ...Array.from({ length: 5 }, () => signals.publish(own, degraded)),
      signals.publish(fleetSignalChannels.clusters, {
        kind: 'cluster',
        changes: [
          { subject: 'east', from: 'ONLINE', to: 'OFFLINE', reason: null },
        ],
      }),
    ]);
    await waitFor(() => expect(result.current.value).toBe(3));
    await sleep(300);
    expect(fetch).toHaveBeenCalledTimes(3);

    unmount();
    expect(signals.listening(own)).toBe(0);
    expect(signals.listening(fleetSignalChannels.clusters)).toBe(0);
  });

  it('polls at the configured fallback interval, with or without signals', async () => {
    const { result, fetch, unmount } = render({
      config: { fleet: { frontend: { pollInterval: 0.1 } } },
      subscription: { channels: [own] },
    });
    await waitFor(() => expect(result.current.value).toBeGreaterThanOrEqual(3));
    unmount();
    const calls = fetch.mock.calls.length;
    await sleep(300);
    expect(fetch).toHaveBeenCalledTimes(calls);
  });

  it('polls every 60 s by default: not within a second', async () => {
    const signals = inMemorySignals();
    const { result, fetch } = render({
      signals,
      subscription: { channels: [own] },
    });
    await waitFor(() => expect(result.current.value).toBe(1));
    await sleep(1_000);
    expect(fetch).toHaveBeenCalledTimes(1);
  });
});
