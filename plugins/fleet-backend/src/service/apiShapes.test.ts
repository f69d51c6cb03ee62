import type { Deployment } from '@cnp/plugin-fleet-common';
import { ADMIN_VIEW, RESTRICTED_VIEW, toApiDeployment } from './apiShapes';

function deployment(extra: Partial<Deployment>): Deployment {
  return {
    id: 'd-1',
    applicationId: 'a-1',
    entityRef: 'component:default/payments',
    cluster: 'sim-1',
    clusterStatus: 'ONLINE',
    status: 'PROGRESSING',
    statusReason: null,
    message: '1 of 3 updated replicas available',
    syncStatus: 'SYNCED',
    image: 'ghcr.io/acme/payments:1.4.2',
    revision: 2,
    placed: true,
    lastAppliedAt: '2026-12-06T10:00:00.000Z',
    lastSyncedAt: null,
    createdAt: '2026-12-06T09:00:00.000Z',
    updatedAt: '2026-12-06T10:00:01.000Z',
    ...extra,
  };
}

describe('toApiDeployment', () => {
  it('gives a PROGRESSING deployment the time its rollout fails: its last apply plus the deadline', () => {
    expect(
      toApiDeployment(deployment({}), RESTRICTED_VIEW, 10 * 60_000),
    ).toMatchObject({
      status: 'PROGRESSING',
      message: '1 of 3 updated replicas available',
      progressDeadlineAt: '2026-12-06T10:10:00.000Z',
    });
    expect(
      toApiDeployment(deployment({}), ADMIN_VIEW, 60_000).progressDeadlineAt,
    ).toBe('2026-12-06T10:01:00.000Z');
  });

  it('gives none to a deployment not PROGRESSING, never applied, or without a deadline', () => {
    for (const d of [
      toApiDeployment(deployment({ status: 'DEPLOYED' }), ADMIN_VIEW, 60_000),
      toApiDeployment(deployment({ lastAppliedAt: null }), ADMIN_VIEW, 60_000),
      toApiDeployment(deployment({}), ADMIN_VIEW),
    ]) {
      expect(d).not.toHaveProperty('progressDeadlineAt');
    }
  });
});
