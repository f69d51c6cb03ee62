import type { Release } from '@cnp/plugin-fleet-common';
import { HIDDEN_DETAIL } from '../util/redactDetail';
import type { Application } from '@cnp/plugin-fleet-common';
import {
  hideApplicationEnv,
  hideReleaseEnv,
  redactReleaseDetails,
  releaseForCaller,
} from './envVisibility';

const release: Release = {
  id: 'r1',
  applicationId: 'a1',
  entityRef: 'component:default/payments',
  createdBy: 'user:default/ada',
  createdAt: '2026-12-01T00:00:00.000Z',
  version: null,
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

  it('shows env names only, with null values, Secret and ConfigMap references included, to those who may not deploy', () => {
    expect(hideReleaseEnv(release).env).toEqual({
      LOG_LEVEL: null,
      DB: null,
    });
  });

  it('hides secretKeyRef and configMapKeyRef names and keys of an application, its overrides included, from a non-deployer', () => {
    const application = {
      id: 'a1',
      entityRef: 'component:default/payments',
      name: 'payments',
      spec: {
        image: 'nginx:1.27',
        env: {
          DB: {
            valueFrom: { secretKeyRef: { name: 'payments-db', key: 'pw' } },
          },
          FLAGS: {
            valueFrom: {
              configMapKeyRef: { name: 'payments-flags', key: 'all' },
            },
          },
        },
      },
      placement: {
        overrides: [
          {
            clusters: ['east'],
            env: {
              DB: {
                valueFrom: {
                  secretKeyRef: { name: 'payments-db-east', key: 'pw' },
                },
              },
            },
          },
        ],
      },
    } as unknown as Application;
    const shown = hideApplicationEnv(application);
    expect(shown.spec.env).toEqual({ DB: null, FLAGS: null });
    expect(JSON.stringify(shown)).not.toMatch(
      /payments-db|payments-flags|"pw"/,
    );
  });

  it('is the one view of a release for every answer: env for deployers, details for cluster admins', () => {
    const answer = (clusterAdmin: boolean, mayDeploy: boolean) =>
      JSON.stringify(
        releaseForCaller(release, { clusterAdmin, mayDeploy: () => mayDeploy }),
      );
    expect(answer(true, true)).toContain('/srv/kube/east.yaml');
    expect(answer(true, true)).toContain('"LOG_LEVEL":"debug"');
    expect(answer(false, true)).not.toMatch(/\/srv\/kube|ENOENT|EACCES/);
    expect(answer(false, true)).toContain('"LOG_LEVEL":"debug"');
    expect(answer(true, false)).not.toContain('debug');
    expect(answer(false, false)).not.toMatch(/debug|secretKeyRef|ENOENT/);
  });

  it("shows no provider's text in an analysis measurement, also one stored before it was kept out, to anyone", () => {
    const stored = {
      ...release,
      progress: {
        ...release.progress!,
        analysis: [
          {
            template: 't',
            cluster: 'east',
            phase: 'Inconclusive' as const,
            value: null,
            condition: 'result[0] > 0',
            message: 'Prometheus answered HTTP 200: internal-admin secret 4e1d',
            at: '2026-12-01T00:00:01.000Z',
          },
          {
            template: 'u',
            cluster: 'east',
            phase: 'Inconclusive' as const,
            value: null,
            condition: 'result[0] > 0',
            message:
              'Prometheus at http://10.0.0.9:9090 is unreachable: connect ECONNREFUSED',
            at: '2026-12-01T00:00:01.000Z',
          },
          {
            template: 'v',
            cluster: 'east',
            phase: 'Successful' as const,
            value: 1,
            condition: 'result == 1',
            message: 'passed, asked with token tok-77',
            at: '2026-12-01T00:00:01.000Z',
          },
        ],
      },
    };
    for (const clusterAdmin of [true, false]) {
      const shown = releaseForCaller(stored, {
        clusterAdmin,
        mayDeploy: () => true,
      });
      expect(shown.progress!.analysis.map(m => m.message)).toEqual([
        'error',
        'unreachable',
        undefined,
      ]);
      expect(shown.progress!.analysis[2]).toEqual({
        template: 'v',
        cluster: 'east',
        phase: 'Successful',
        value: 1,
        condition: 'result == 1',
        at: '2026-12-01T00:00:01.000Z',
      });
    }
  });
});
