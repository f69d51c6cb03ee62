import {
  promotion,
  sharedClusters,
  stageClusters,
  verifyStage,
  versionOf,
  type ClusterRun,
  type KnownCluster,
  type StageRelease,
} from './verification';

const IMAGE = 'ghcr.io/acme/payments:1.5.0';

function run(
  cluster: string,
  options: {
    status?: ClusterRun['deployment']['status'];
    image?: string;
    revision?: number;
    cause?: NonNullable<ClusterRun['revision']>['cause'];
    outcomeAt?: string | null;
    source?: NonNullable<ClusterRun['revision']>['source'];
  } = {},
): [string, ClusterRun] {
  const revision = options.revision ?? 2;
  return [
    cluster,
    {
      deployment: {
        id: `d-${cluster}`,
        cluster,
        status: options.status ?? 'DEPLOYED',
        revision,
      },
      revision: {
        deploymentId: `d-${cluster}`,
        revision,
        image: options.image ?? IMAGE,
        cause: options.cause ?? 'release',
        outcomeAt:
          options.outcomeAt === undefined
            ? '2026-12-06T12:00:00.000Z'
            : options.outcomeAt,
        source: options.source ?? null,
      },
    },
  ];
}

function release(
  id: string,
  clusters: string[],
  completed = true,
  revision = 2,
): StageRelease {
  return {
    record: {
      id,
      createdAt: '2026-12-06T11:00:00.000Z',
      targets: clusters.map(c => ({
        cluster: c,
        deploymentId: `d-${c}`,
        revision,
      })),
    },
    completed,
  };
}

describe('versionOf', () => {
  it('is the image, or the manifests commit, else their version', () => {
    expect(versionOf(run('a')[1].revision)).toBe(IMAGE);
    const source = {
      url: 'https://git.example/x',
      version: 'v1.2.0',
      commit: 'abc123',
      digest: 'd',
      objectCount: 1,
    };
    expect(versionOf(run('a', { source })[1].revision)).toBe('abc123');
    expect(
      versionOf(run('a', { source: { ...source, commit: null } })[1].revision),
    ).toBe('v1.2.0');
  });
});

describe('stageClusters', () => {
  const known: KnownCluster[] = [
    { name: 'sim-1', labels: { env: 'staging' } },
    { name: 'sim-2', labels: { env: 'prod' } },
    { name: 'sim-3', labels: { env: 'prod', zone: 'b' } },
  ];

  it('takes named clusters as given and selects by labels among the known ones', () => {
    const clusters = stageClusters(
      [
        { name: 'staging', clusters: ['sim-1'] },
        { name: 'prod', clusterSelector: 'env=prod' },
        { name: 'b', clusterSelector: { matchLabels: { zone: 'b' } } },
      ],
      known,
    );
    expect(Object.fromEntries(clusters)).toEqual({
      staging: ['sim-1'],
      prod: ['sim-2', 'sim-3'],
      b: ['sim-3'],
    });
    expect(Object.fromEntries(sharedClusters(clusters))).toEqual({
      'sim-3': ['prod', 'b'],
    });
  });
});

describe('verifyStage', () => {
  it('verifies the version every cluster runs DEPLOYED after a completed release', () => {
    const result = verifyStage({
      stage: 'staging',
      clusters: ['sim-1', 'sim-2'],
      runs: new Map([
        run('sim-1', { outcomeAt: '2026-12-06T12:00:00.000Z' }),
        run('sim-2', { outcomeAt: '2026-12-06T12:05:00.000Z' }),
      ]),
      releases: [release('r1', ['sim-1', 'sim-2'])],
    });
    expect(result.missing).toEqual([]);
    expect(result.verified?.version).toBe(IMAGE);
    expect(result.verified?.since.toISOString()).toBe(
      '2026-12-06T12:05:00.000Z',
    );
  });

  it('says which cluster is not there yet', () => {
    const result = verifyStage({
      stage: 'staging',
      clusters: ['sim-1', 'sim-3'],
      runs: new Map([
        run('sim-1'),
        run('sim-3', { status: 'PROGRESSING', outcomeAt: null }),
      ]),
      releases: [release('r1', ['sim-1', 'sim-3'], false)],
    });
    expect(result.verified).toBeUndefined();
    expect(result.missing).toEqual([
      `staging runs ${IMAGE} on sim-1 but sim-3 is PROGRESSING`,
    ]);
  });

  it('verifies nothing before the release completed, or without one', () => {
    const runs = new Map([run('sim-1')]);
    expect(
      verifyStage({
        stage: 'staging',
        clusters: ['sim-1'],
        runs,
        releases: [release('r1', ['sim-1', 'sim-9'], false)],
      }).missing,
    ).toEqual([`staging runs ${IMAGE} but its release r1 has not completed`]);
    expect(
      verifyStage({ stage: 'staging', clusters: ['sim-1'], runs, releases: [] })
        .missing,
    ).toEqual([`staging runs ${IMAGE} but no release brought it there`]);
  });

  it('verifies nothing while a cluster runs an automatic rollback, even to a verified version', () => {
    const result = verifyStage({
      stage: 'staging',
      clusters: ['sim-1', 'sim-2'],
      runs: new Map([
        run('sim-1'),
        run('sim-2', { cause: 'auto-rollback', revision: 4 }),
      ]),
      releases: [release('r1', ['sim-1', 'sim-2'])],
    });
    expect(result.verified).toBeUndefined();
    expect(result.missing[0]).toContain(
      'sim-2 was rolled back automatically (revision 4): a new release must complete',
    );
  });

  it('verifies nothing when the clusters run different versions, or there are none', () => {
    expect(
      verifyStage({
        stage: 'staging',
        clusters: ['sim-1', 'sim-2'],
        runs: new Map([run('sim-1'), run('sim-2', { image: 'x:2' })]),
        releases: [release('r1', ['sim-1', 'sim-2'])],
      }).missing,
    ).toEqual([
      `staging: its clusters run different versions (${IMAGE} on sim-1; x:2 on sim-2)`,
    ]);
    expect(
      verifyStage({
        stage: 'staging',
        clusters: [],
        runs: new Map(),
        releases: [],
      }).missing,
    ).toEqual(['staging holds no cluster']);
  });
});

describe('promotion', () => {
  const verification = verifyStage({
    stage: 'staging',
    clusters: ['sim-1'],
    runs: new Map([run('sim-1', { outcomeAt: '2026-12-06T12:00:00.000Z' })]),
    releases: [release('r1', ['sim-1'])],
  });

  it('takes the verified version once soaked', () => {
    const verdict = promotion({
      requires: { stage: 'staging', soak: '1h' },
      verification,
      now: new Date('2026-12-06T13:00:00.000Z'),
    });
    expect(verdict).toMatchObject({ ok: true, version: IMAGE });
  });

  it('refuses before the soak is over, saying until when', () => {
    expect(
      promotion({
        requires: { stage: 'staging', soak: '1h' },
        verification,
        now: new Date('2026-12-06T12:59:59.000Z'),
      }),
    ).toEqual({
      ok: false,
      missing: [
        `staging runs ${IMAGE} since 2026-12-06T12:00:00.000Z: soaked until 2026-12-06T13:00:00.000Z`,
      ],
    });
  });

  it('refuses another version than the verified one', () => {
    expect(
      promotion({
        requires: { stage: 'staging' },
        verification,
        requested: 'ghcr.io/acme/payments:1.6.0',
        now: new Date('2026-12-07T00:00:00.000Z'),
      }),
    ).toEqual({
      ok: false,
      missing: [`staging verified ${IMAGE}, not ghcr.io/acme/payments:1.6.0`],
    });
  });

  it('compares a manifests version with the verified source version or commit', () => {
    const source = {
      url: 'https://git.example/x',
      version: 'v1.2.0',
      commit: 'abc123',
      digest: 'd',
      objectCount: 1,
    };
    const manifests = verifyStage({
      stage: 'staging',
      clusters: ['sim-1'],
      runs: new Map([run('sim-1', { source })]),
      releases: [release('r1', ['sim-1'])],
    });
    const now = new Date('2026-12-07T00:00:00.000Z');
    const requires = { stage: 'staging' };
    expect(
      promotion({ requires, verification: manifests, requested: 'v1.2.0', now })
        .ok,
    ).toBe(true);
    expect(
      promotion({ requires, verification: manifests, requested: 'abc123', now })
        .ok,
    ).toBe(true);
    expect(
      promotion({ requires, verification: manifests, requested: 'v1.3.0', now })
        .ok,
    ).toBe(false);
  });

  it('passes on what the required stage misses', () => {
    expect(
      promotion({
        requires: { stage: 'staging' },
        verification: {
          verified: undefined,
          missing: ['staging holds no cluster'],
        },
        now: new Date(),
      }),
    ).toEqual({ ok: false, missing: ['staging holds no cluster'] });
  });
});
