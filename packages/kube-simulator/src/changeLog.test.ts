import { ChangeEvent, ChangeLog } from './changeLog';
import { PATCH_TYPES } from './patch';
import { resourceForKind } from './resources';
import { ClusterStore } from './store';

const NS = resourceForKind('Namespace')!;
const SVC = resourceForKind('Service')!;
const SECRET = resourceForKind('Secret')!;

function event(rv: number): ChangeEvent {
  return {
    rv,
    type: 'ADDED',
    resource: '/namespaces',
    object: { json: '{}', selection: { labels: {}, fields: {} } },
  };
}

describe('ChangeLog', () => {
  it('keeps a bounded window, and answers undefined (410) below it', () => {
    const log = new ChangeLog();
    log.limit = 3;
    for (const rv of [2, 3, 5, 8, 9]) log.append(event(rv));
    expect(log.size).toBe(3);
    expect(log.oldestWatchable).toBe(3);
    expect(log.since(2)).toBeUndefined();
    expect(log.since(3)!.map(e => e.rv)).toEqual([5, 8, 9]);
    expect(log.since(6)!.map(e => e.rv)).toEqual([8, 9]);
    expect(log.since(9)).toEqual([]);
    log.compact(10);
    expect(log.since(9)).toBeUndefined();
    expect(log.since(10)).toEqual([]);
    expect(() => {
      log.limit = 0;
    }).toThrow('the watch history limit must be a positive integer, got 0');
  });

  it('tells subscribers of each change until they unsubscribe', () => {
    const log = new ChangeLog();
    const seen: number[] = [];
    const off = log.subscribe(e => seen.push(e.rv));
    log.append(event(1));
    off();
    log.append(event(2));
    expect(seen).toEqual([1]);
  });
});

describe('ClusterStore changes', () => {
  function recording() {
    const store = new ClusterStore(0);
    const seen: ChangeEvent[] = [];
    store.changes.subscribe(e => seen.push(e));
    return { store, seen };
  }
  const describeEvents = (seen: ChangeEvent[]) =>
    seen.map(
      e =>
        `${e.type} ${e.resource} ${JSON.parse(e.object.json).metadata.name} ${
          e.rv
        }`,
    );

  it('records no event for a no-op write or a dry run', () => {
    const { store, seen } = recording();
    const created = store.create(
      SVC,
      'default',
      { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } },
      {},
    );
    expect(seen).toHaveLength(1);
    store.patch(SVC, 'default', 'web', PATCH_TYPES.merge, { spec: {} }, {});
    store.create(
      SVC,
      'default',
      { metadata: { name: 'dry' }, spec: { ports: [{ port: 80 }] } },
      { dryRun: true },
    );
    store.delete(SVC, 'default', 'web', undefined, { dryRun: true });
    expect(describeEvents(seen)).toEqual([
      `ADDED /services web ${created.metadata.resourceVersion}`,
    ]);
  });

  it('gives each object a namespace deletion removes its own DELETED event and resourceVersion', () => {
    const { store, seen } = recording();
    store.create(NS, undefined, { metadata: { name: 'team' } }, {});
    store.create(
      SECRET,
      'team',
      { metadata: { name: 'a' }, stringData: { k: 'v' } },
      {},
    );
    store.create(
      SECRET,
      'team',
      { metadata: { name: 'b' }, stringData: { k: 'v' } },
      {},
    );
    seen.length = 0;
    store.delete(NS, undefined, 'team', undefined, {});
    const rv = Number(store.resourceVersion());
    expect(describeEvents(seen)).toEqual([
      `DELETED /secrets a ${rv - 2}`,
      `DELETED /secrets b ${rv - 1}`,
      `DELETED /namespaces team ${rv}`,
    ]);
    // the last state, at the deletion's resourceVersion
    expect(JSON.parse(seen[0].object.json).data).toEqual({ k: 'dg==' });
    expect(JSON.parse(seen[0].object.json).metadata.resourceVersion).toBe(
      String(rv - 2),
    );
  });

  it('shows a delete held by finalizers as MODIFIED, then DELETED when the last finalizer goes', () => {
    const { store, seen } = recording();
    store.create(
      SECRET,
      'default',
      {
        metadata: { name: 'held', finalizers: ['example.com/hold'] },
        stringData: { k: 'v' },
      },
      {},
    );
    seen.length = 0;
    store.delete(SECRET, 'default', 'held', undefined, {});
    store.patch(
      SECRET,
      'default',
      'held',
      PATCH_TYPES.merge,
      { metadata: { finalizers: null } },
      {},
    );
    expect(seen.map(e => e.type)).toEqual(['MODIFIED', 'DELETED']);
    expect(
      JSON.parse(seen[0].object.json).metadata.deletionTimestamp,
    ).toBeDefined();
    expect(seen[1].rv).toBeGreaterThan(seen[0].rv);
  });

  it('records DELETED for the objects of a CRD that is uninstalled', () => {
    const { store, seen } = recording();
    const rollouts = resourceForKind('Rollout')!;
    store.create(
      rollouts,
      'default',
      {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        metadata: { name: 'pay' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'pay' } },
          template: {
            metadata: { labels: { app: 'pay' } },
            spec: { containers: [{ name: 'app', image: 'pay:1' }] },
          },
        },
      },
      {},
    );
    seen.length = 0;
    store.setCrdInstalled('rollouts.argoproj.io', false);
    expect(describeEvents(seen)).toEqual([
      `DELETED argoproj.io/rollouts pay ${store.resourceVersion()}`,
    ]);
  });
});
