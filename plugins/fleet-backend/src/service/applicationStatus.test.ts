import type { Application, Deployment } from '@cnp/plugin-fleet-common';
import { applicationFleetStatus } from './applicationStatus';

const application = {
  id: 'a1',
  entityRef: 'component:default/pay',
} as Application;

const deployment = (
  cluster: string,
  image: string,
  syncStatus: Deployment['syncStatus'],
): Deployment => ({
  id: `d-${cluster}`,
  applicationId: 'a1',
  entityRef: 'component:default/pay',
  cluster,
  clusterStatus: 'ONLINE',
  status: 'DEPLOYED',
  statusReason: null,
  message: null,
  syncStatus,
  image,
  revision: 2,
  placed: true,
  lastAppliedAt: null,
  lastSyncedAt: null,
  createdAt: '2026-12-01T10:00:00.000Z',
  updatedAt: '2026-12-01T10:00:00.000Z',
});

describe('applicationFleetStatus', () => {
  it('says which version runs where and how many clusters are SYNCED', () => {
    const status = applicationFleetStatus(application, [
      deployment('a', 'ghcr.io/acme/pay:1.4.2', 'SYNCED'),
      deployment('b', 'ghcr.io/acme/pay:1.4.2', 'SYNCED'),
      deployment('c', 'ghcr.io/acme/pay:1.4.1', 'OUT_OF_SYNC'),
      deployment('d', 'ghcr.io/acme/pay:1.4.2', 'SYNCED'),
    ]);
    expect(status.summary).toBe(
      '3 of 4 SYNCED; 1.4.2 on 3 clusters, 1.4.1 on 1',
    );
    expect(status.totals).toEqual({
      deployments: 4,
      bySyncStatus: { SYNCED: 3, OUT_OF_SYNC: 1, UNKNOWN: 0 },
      byImage: [
        { image: 'ghcr.io/acme/pay:1.4.2', clusters: 3 },
        { image: 'ghcr.io/acme/pay:1.4.1', clusters: 1 },
      ],
    });
    expect(status.clusters.map(c => [c.cluster, c.revision])).toEqual([
      ['a', 2],
      ['b', 2],
      ['c', 2],
      ['d', 2],
    ]);
  });

  it('keeps an untagged image whole, a registry port is not a tag, and an empty fleet says so', () => {
    expect(
      applicationFleetStatus(application, [
        deployment('a', 'localhost:5000/pay', 'SYNCED'),
      ]).summary,
    ).toBe('1 of 1 SYNCED; localhost:5000/pay on 1 cluster');
    expect(applicationFleetStatus(application, []).summary).toBe(
      'not deployed',
    );
  });
});
