import type { Release } from '@cnp/plugin-fleet-common';
import { HIDDEN_DETAIL } from '../util/redactDetail';
import { hideReleaseEnv, redactReleaseDetails } from './envVisibility';

const release: Release = {
  id: 'r1',
  applicationId: 'a1',
  entityRef: 'component:default/payments',
  createdBy: 'user:default/ada',
  createdAt: '2026-12-01T00:00:00.000Z',
  env: {
    LOG_LEVEL: 'debug',
    DB: { valueFrom: { secretKeyRef: { name: 'db', key: 'p' } } },
  },
  status: 'ROLLED_BACK',
  targets: [],
  skipped: [
    {
      cluster: 'c',
      reason: "kubeconfig file '/etc/fleet/c.yaml' is not readable (EACCES)",
    },
  ],
  progress: {
    phase: 'ROLLED_BACK',
    currentWave: 0,
    waves: [['east']],
    clusters: [
      {
        cluster: 'east',
        wave: 0,
        state: 'ROLLED_BACK',
        stepIndex: 0,
        weight: 0,
        failures: 0,
        inconclusive: 0,
        message:
          "cluster 'east' has no usable kubeconfig: kubeconfig file '/srv/kube/east.yaml' is not readable (ENOENT)",
      },
    ],
    analysis: [],
    abort: {
      reason: 'STEP_FAILED',
      message:
        "east: kubeconfig file '/srv/kube/east.yaml' is not readable (ENOENT)",
      at: '2026-12-01T00:00:01.000Z',
    },
    updatedAt: '2026-12-01T00:00:01.000Z',
  },
};

describe('what a release shows to whom', () => {
  it('keeps kubeconfig paths and host error codes out of the release for those who are not cluster admins', () => {
    const shown = JSON.stringify(redactReleaseDetails(release));
    expect(shown).not.toMatch(/\/srv\/kube|\/etc\/fleet|ENOENT|EACCES/);
    expect(shown).toContain(HIDDEN_DETAIL);
  });

  it('shows env names with null values, and references as they are, to those who may not deploy', () => {
    expect(hideReleaseEnv(release).env).toEqual({
      LOG_LEVEL: null,
      DB: { valueFrom: { secretKeyRef: { name: 'db', key: 'p' } } },
    });
  });
});
