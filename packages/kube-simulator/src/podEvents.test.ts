import { EventRecorder } from './podEvents';
import type { PodControllerHost } from './podObjects';
import type { JsonObject } from './util';

/** The store's Events only: what an EventRecorder reads and writes. */
function eventsHost() {
  const events = new Map<string, JsonObject>();
  const host = {
    all: () => [...events.values()],
    save: (_kind: string, obj: JsonObject) => {
      const m = obj.metadata as { namespace: string; name: string };
      events.set(`${m.namespace}/${m.name}`, obj);
      return obj;
    },
  } as unknown as PodControllerHost;
  return { host, events };
}

const pod = {
  kind: 'Pod',
  apiVersion: 'v1',
  obj: { metadata: { name: 'web-1', namespace: 'default', uid: 'u-1' } },
};

describe('EventRecorder', () => {
  it('keeps two events recorded at the same time by two controller passes (a held clock)', () => {
    const { host, events } = eventsHost();
    const at = Date.parse('2026-12-07T03:00:00Z');
    new EventRecorder(host, at).record({
      involved: pod,
      type: 'Normal',
      reason: 'Pulled',
      message: 'Container image pulled',
      component: 'kubelet',
    });
    new EventRecorder(host, at).record({
      involved: pod,
      type: 'Normal',
      reason: 'Started',
      message: 'Started container app',
      component: 'kubelet',
    });
    expect([...events.values()].map(e => e.reason)).toEqual([
      'Pulled',
      'Started',
    ]);
  });
});
