import type { Application } from '@cnp/plugin-fleet-common';
import type {
  ClusterRecord,
  NewEvent,
  ReleaseChange,
  ReleaseRecord,
  ReleaseStore,
} from '../database/types';
import type { FrozenBy } from '../stages/freezeWindows';
import { ReleaseGates } from './ReleaseGates';

// The gates over a release store held in memory, with freeze windows the test opens and closes.

const sre = 'group:default/sre';
const application = {
  id: 'app-1',
  entityRef: 'component:default/payments',
  spec: {
    stages: [
      { name: 'staging', clusters: ['stg-a'] },
      {
        name: 'prod',
        clusters: ['prd-a'],
        requires: {
          stage: 'staging',
          approvals: { groups: [sre], count: 2 },
        },
      },
    ],
  },
} as unknown as Application;

function setup() {
  const records = new Map<string, ReleaseRecord>();
  const events: NewEvent[] = [];
  const releases = {
    async insertRelease(
      r: Omit<ReleaseRecord, 'createdAt' | 'version'>,
      written: NewEvent[] = [],
    ) {
      const record = { ...r, createdAt: 'now', version: 0 } as ReleaseRecord;
      records.set(r.id, record);
      events.push(...written);
      return record;
    },
    async getRelease(id: string) {
      const r = records.get(id);
      return r && structuredClone(r);
    },
    async updateRelease(
      id: string,
      expected: number,
      change: ReleaseChange,
      written: NewEvent[] = [],
    ) {
      const r = records.get(id)!;
      if (r.version !== expected) return false;
      records.set(id, {
        ...r,
        ...Object.fromEntries(
          Object.entries(change).filter(([, v]) => v !== undefined),
        ),
        version: expected + 1,
      } as ReleaseRecord);
      events.push(...written);
      return true;
    },
    async listOpenReleases() {
      return [...records.values()].filter(r =>
        ['WAITING_FOR_APPROVAL', 'WAITING_FOR_WINDOW'].includes(r.phase!),
      );
    },
  } as unknown as ReleaseStore;
  let frozen: FrozenBy[] = [];
  const started: string[] = [];
  const gates = ReleaseGates.create({
    stores: {
      applications: { getApplication: async () => application },
      clusters: {
        getCluster: async name => ({ name, labels: {} } as ClusterRecord),
      },
      releases,
    },
    windows: { frozen: () => frozen },
    clock: () => new Date('2026-12-04T12:00:00Z'),
    async start(_app, _clusters, _request, _actor, waited) {
      await releases.updateRelease(
        waited.record.id,
        waited.record.version,
        { ...waited.change, phase: 'STARTING' },
        waited.events,
      );
      started.push(waited.record.id);
      return waited.record.id;
    },
  });
  return {
    gates,
    events,
    started,
    freeze: (on: boolean) => {
      frozen = on
        ? [
            {
              name: 'friday',
              clusters: ['prd-a'],
              closesAt: new Date('2026-12-07T09:00:00Z'),
            },
          ]
        : [];
    },
  };
}

const person = (name: string) => ({
  ref: `user:default/${name}`,
  groups: [sre],
});

describe('ReleaseGates', () => {
  it('counts no freeze override given while no window was open against a window that opens later', async () => {
    const { gates, events, started, freeze } = setup();
    const held = await gates.hold(
      application,
      [{ name: 'prd-a', labels: {} } as ClusterRecord],
      { stage: 'prod', image: 'payments:1.5.0' },
      'user:default/jane',
    );
    // Stored with its first event.
    expect(events).toEqual([
      expect.objectContaining({
        subject: held!.id,
        reason: 'WAITING_FOR_APPROVAL',
      }),
    ]);
    // Carol approves "overriding" a freeze while none is open; then the weekend freeze opens.
    await gates.approve(held!.id, person('carol'), { overrideFreeze: true });
    freeze(true);
    await gates.approve(held!.id, person('dave'), {});
    // Nobody overrode the window that is open now: the release waits for it.
    expect(started).toEqual([]);
    expect(events.map(e => e.reason)).not.toContain('GATE_OPENED');
    await gates.openClosedWindows();
    expect(started).toEqual([]);
    // Once it closes, the release starts.
    freeze(false);
    await gates.openClosedWindows();
    expect(started).toEqual([held!.id]);
  });
});
