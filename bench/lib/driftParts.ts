/*
 * Parts of bench/drift.ts: the deployments it drifts, the change it makes behind Fleet's back,
 * and the time of each drift until the backend recorded the deployment OUT_OF_SYNC.
 */
import type { SimProcess } from '@cnp/fleet-harness';
import { waitFor } from './waitFor';

const NAMESPACE = 'default';

/** Picks `n` distinct deployments not picked before. */
export function picker<T>(items: T[]) {
  const order = items
    .map(item => ({ item, key: Math.random() }))
    .sort((a, b) => a.key - b.key)
    .map(x => x.item);
  let next = 0;
  return (n: number): T[] => {
    if (next + n > order.length) throw new Error('not enough deployments');
    next += n;
    return order.slice(next - n, next);
  };
}

export interface Seeded {
  id: string;
  cluster: string;
  name: string;
}

export const driftOf = (d: Seeded, tag: string) => ({
  cluster: d.cluster,
  kind: 'Deployment',
  namespace: NAMESPACE,
  name: d.name,
  patch: {
    spec: {
      template: {
        spec: { containers: [{ name: d.name, image: `drifted/${tag}:1` }] },
      },
    },
  },
});

/**
 * Drifts each deployment of `sample`, 1 s apart, and times it from just before the harness
 * changes its object (the simulator's drift hook, one IPC hop) to the time the backend recorded
 * its transition to OUT_OF_SYNC: the `createdAt` of that event in
 * `GET /deployments/{id}/events` (written in the transaction that records the status). The
 * API's `syncStatus` is polled every 200 ms only to know when to read the event; the poll's own
 * time is kept beside it. A drift whose event is not found (older code) has no backend time.
 */
export async function timeDrifts(options: {
  sim: SimProcess;
  base: string;
  token: string;
  sample: Seeded[];
  tag: string;
}): Promise<{ backendMs: number[]; polledMs: number[]; noEvent: number }> {
  const headers = { Authorization: `Bearer ${options.token}` };
  const backendMs: number[] = [];
  const polledMs: number[] = [];
  let noEvent = 0;
  await Promise.all(
    options.sample.map(async (d, i) => {
      await new Promise(r => setTimeout(r, i * 1000));
      const at = Date.now();
      await options.sim.drift([driftOf(d, `${options.tag}-${i}`)]);
      await waitFor(
        `OUT_OF_SYNC of ${d.id}`,
        async () => {
          const res = await fetch(`${options.base}/deployments/${d.id}`, {
            headers,
          });
          const body = (await res.json()) as { syncStatus?: string };
          return body.syncStatus === 'OUT_OF_SYNC';
        },
        600_000,
        200,
      );
      polledMs.push(Date.now() - at);
      const res = await fetch(`${options.base}/deployments/${d.id}/events`, {
        headers,
      });
      const { items = [] } = (await res.json()) as {
        items?: Array<{ to: string; createdAt: string }>;
      };
      // Newest first: the first OUT_OF_SYNC since the change.
      const transition = items
        .filter(e => e.to === 'OUT_OF_SYNC' && Date.parse(e.createdAt) >= at)
        .pop();
      if (transition) backendMs.push(Date.parse(transition.createdAt) - at);
      else noEvent += 1;
    }),
  );
  return { backendMs, polledMs, noEvent };
}
