import type {
  Application,
  Deployment,
  Revision,
} from '@cnp/plugin-fleet-common';
import type { ReleaseRecord } from '../database/types';
import { StageService } from './StageService';

// The service over stores held in memory: what it reads of them, and the clock it is given.

const V1 = 'ghcr.io/acme/payments:1.5.0';

function deployment(cluster: string, current = 2): Deployment {
  return {
    id: `d-${cluster}`,
    cluster,
    status: 'DEPLOYED',
    revision: current,
  } as Deployment;
}

function revision(cluster: string, over: Partial<Revision> = {}): Revision {
  return {
    deploymentId: `d-${cluster}`,
    cluster,
    revision: 2,
    image: V1,
    cause: 'release',
    outcome: 'DEPLOYED',
    outcomeAt: '2026-12-06T12:00:00.000Z',
    source: null,
    ...over,
  } as Revision;
}

function setup(options: {
  stages: NonNullable<Application['spec']['stages']>;
  revisions: Revision[];
  releases: Array<Partial<ReleaseRecord>>;
  older?: Revision[];
  now?: string;
}) {
  const application = {
    id: 'app-1',
    entityRef: 'component:default/payments',
    spec: { stages: options.stages },
  } as Application;
  const service = StageService.create({
    stores: {
      applications: { getApplication: async () => application },
      clusters: {
        listClusters: async () =>
          [
            { name: 'stg-a', labels: { env: 'staging' } },
            { name: 'prd-a', labels: { env: 'prod' } },
            { name: 'prd-b', labels: { env: 'prod' } },
          ] as any,
      },
      deployments: {
        listDeployments: async () =>
          options.revisions.map(r => deployment(r.cluster, r.revision)),
      },
      revisions: {
        listCurrentRevisions: async () => options.revisions,
        getRevision: async (deploymentId, n) =>
          [...options.revisions, ...(options.older ?? [])].find(
            r => r.deploymentId === deploymentId && r.revision === n,
          ),
      },
      releases: {
        listReleases: async () =>
          options.releases.map((r, i) => ({
            id: `r${i}`,
            applicationId: 'app-1',
            createdBy: 'test',
            createdAt: '2026-12-06T11:00:00.000Z',
            request: {},
            skipped: [],
            version: 1,
            targets: [],
            ...r,
          })),
      },
    },
    clock: () => new Date(options.now ?? '2026-12-07T12:00:00.000Z'),
  });
  return { application, service };
}

const target = (cluster: string, n = 2) => ({
  cluster,
  deploymentId: `d-${cluster}`,
  revision: n,
});

const stages = [
  { name: 'staging', clusters: ['stg-a'] },
  {
    name: 'prod',
    clusterSelector: { env: 'prod' },
    requires: { stage: 'staging', soak: '1d' },
  },
];

describe('StageService', () => {
  it('releases to prod the image staging verified once soaked, by the clock it is given', async () => {
    const { application, service } = setup({
      stages,
      revisions: [revision('stg-a')],
      releases: [{ targets: [target('stg-a')] }],
    });
    await expect(
      service.planRelease(application, { stage: 'prod' }),
    ).resolves.toEqual({ clusters: ['prd-a', 'prd-b'], image: V1 });
    const early = setup({
      stages,
      revisions: [revision('stg-a')],
      releases: [{ targets: [target('stg-a')] }],
      now: '2026-12-07T11:59:59.000Z',
    });
    await expect(
      early.service.planRelease(early.application, { stage: 'prod' }),
    ).rejects.toThrow(
      `stage prod requires a version staging verified: staging runs ${V1} since 2026-12-06T12:00:00.000Z: soaked until 2026-12-07T12:00:00.000Z`,
    );
  });

  it('counts an immediate release completed only when every target reached DEPLOYED', async () => {
    const { application, service } = setup({
      stages,
      revisions: [revision('stg-a')],
      older: [revision('prd-a', { revision: 5, outcome: 'FAILED' })],
      releases: [{ targets: [target('stg-a'), target('prd-a', 5)] }],
    });
    await expect(
      service.planRelease(application, { stage: 'prod' }),
    ).rejects.toThrow(`its release r0 has not completed`);
  });

  it('reads a release with a strategy by its phase', async () => {
    const done = setup({
      stages,
      revisions: [revision('stg-a')],
      releases: [
        {
          targets: [target('stg-a')],
          strategy: { waves: [] } as any,
          phase: 'COMPLETED',
          progress: { phase: 'COMPLETED' } as any,
        },
      ],
    });
    expect((await done.service.listStages('app-1'))[0].verified).toEqual({
      version: V1,
      since: '2026-12-06T12:00:00.000Z',
      soakedUntil: '2026-12-07T12:00:00.000Z',
    });
    const rolledBack = setup({
      stages,
      revisions: [revision('stg-a')],
      releases: [
        {
          targets: [target('stg-a')],
          strategy: { waves: [] } as any,
          phase: 'ROLLED_BACK',
          progress: { phase: 'ROLLED_BACK' } as any,
        },
      ],
    });
    expect((await rolledBack.service.listStages('app-1'))[0].verified).toBe(
      null,
    );
  });

  it('releases a manifests commit, and refuses a cluster two stages select', async () => {
    const source = {
      url: 'https://git.example/payments',
      version: 'v1.5.0',
      commit: 'abc123',
      digest: 'd',
      objectCount: 2,
    };
    const { application, service } = setup({
      stages,
      revisions: [revision('stg-a', { source })],
      releases: [{ targets: [target('stg-a')] }],
    });
    await expect(
      service.planRelease(application, { stage: 'prod', clusters: ['prd-b'] }),
    ).resolves.toEqual({ clusters: ['prd-b'], version: 'abc123' });

    const shared = setup({
      stages: [
        { name: 'canary', clusters: ['prd-a'] },
        { name: 'prod', clusterSelector: 'env=prod' },
      ],
      revisions: [],
      releases: [],
    });
    await expect(
      shared.service.planRelease(shared.application, { stage: 'prod' }),
    ).rejects.toThrow(
      "A cluster belongs to one stage at most: prd-a is in canary and prod; change the stages' clusters or selectors",
    );
  });
});
