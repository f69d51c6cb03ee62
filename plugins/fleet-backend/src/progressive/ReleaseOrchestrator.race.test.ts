import type { ReleaseProgress } from '@cnp/plugin-fleet-common';
import { mockServices } from '@backstage/backend-test-utils';
import type { ReleaseRecord } from '../database/types';
import type { RollbackRequest } from '../deploy/DeploymentService';
import { ReleaseOrchestrator } from './ReleaseOrchestrator';
import { TrafficProviders } from './traffic/TrafficProviders';
import { initialProgress } from './releaseMachine';
import { applySteering } from './steering';
import { Transition } from './releaseMachine';

/*
 * The orchestrator's own ordering, with the stores and the clusters replaced by in-memory ones
 * whose calls take time: what happens when one cluster fails while another is mid-step, and
 * when an abort through the API lands while a tick is changing clusters. (The same code runs
 * against the simulator and real databases in ReleaseOrchestrator.test.ts.)
 */

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));
const strategy: any = {
  waves: [{ clusters: ['a', 'b'] }, { clusters: ['c'] }],
  canary: { steps: [{ setWeight: 50 }, { pause: {} }, { setWeight: 100 }] },
  analysis: {
    templates: [
      {
        name: 'success-rate',
        successCondition: 'result[0] > 0.99',
        provider: { prometheus: { address: 'http://prometheus', query: 'q' } },
      },
    ],
  },
};

function world(progress: ReleaseProgress) {
  let record: ReleaseRecord = {
    id: 'r1',
    applicationId: 'app',
    createdBy: 'user:default/ada',
    createdAt: new Date(Date.now() - 1000).toISOString(),
    request: { image: 'img:2' },
    strategy,
    phase: progress.phase,
    progress,
    targets: [],
    skipped: [],
    version: 0,
  };
  const deployments: Record<string, any> = {};
  const revisions: Record<string, any[]> = {};
  for (const cluster of ['a', 'b', 'c']) {
    deployments[`d-${cluster}`] = {
      id: `d-${cluster}`,
      revision: 1,
      status: 'DEPLOYED',
    };
    revisions[`d-${cluster}`] = [
      {
        revision: 1,
        image: 'img:1',
        replicas: 4,
        cause: 'deploy',
        createdBy: 'x',
        createdAt: record.createdAt,
      },
    ];
  }
  const calls: string[] = [];
  /** The names each read of the clusters asked for. */
  const clusterReads: Array<string[] | 'all'> = [];
  const hooks: { duringStep?: (cluster: string) => Promise<void> } = {};
  const newRevision = (
    id: string,
    cause: string,
    createdBy: string,
    status: string,
  ) => {
    const revision = deployments[id].revision + 1;
    revisions[id].push({
      revision,
      image: cause === 'release' ? 'img:2' : 'img:1',
      replicas: 4,
      cause,
      createdBy,
      createdAt: new Date().toISOString(),
    });
    deployments[id] = { id, revision, status };
    return { ...deployments[id] };
  };
  const orchestrator = ReleaseOrchestrator.create({
    stores: {
      releases: {
        listActiveReleases: async () =>
          ['PROGRESSING', 'PAUSED', 'ABORTING'].includes(record.phase!)
            ? [structuredClone(record)]
            : [],
        getRelease: async () => structuredClone(record),
        updateProgress: async (
          _id: string,
          version: number,
          p: ReleaseProgress,
          extra: any = {},
        ) => {
          if (version !== record.version) return false;
          record = {
            ...record,
            progress: p,
            phase: p.phase,
            version: version + 1,
            targets: extra.targets ?? record.targets,
          };
          return true;
        },
      },
      applications: {
        getApplication: async () => ({
          id: 'app',
          name: 'payments',
          entityRef: 'component:default/payments',
          spec: { image: 'img:1' },
        }),
      },
      clusters: {
        getCluster: async (name: string) => ({
          name,
          status: 'ONLINE',
          labels: {},
        }),
        listClusters: async (filter?: { names?: string[] }) => {
          clusterReads.push(filter?.names ? [...filter.names].sort() : 'all');
          return ['a', 'b', 'c']
            .filter(name => !filter?.names || filter.names.includes(name))
            .map(name => ({ name, status: 'ONLINE', labels: {} }));
        },
      },
      deployments: {
        getDeployment: async (id: string) => ({ ...deployments[id] }),
        getDeploymentFor: async (_app: string, cluster: string) => ({
          ...deployments[`d-${cluster}`],
        }),
      },
      revisions: {
        getRevision: async (id: string, revision: number) =>
          revisions[id].find(r => r.revision === revision),
      },
    } as any,
    deployments: {
      deploy: async (request: any) => {
        calls.push(`deploy ${request.cluster}`);
        await sleep(80);
        return newRevision(
          `d-${request.cluster}`,
          'release',
          'user:default/ada',
          'PROGRESSING',
        );
      },
      rollback: async ({
        deploymentId: id,
        toRevision: to,
        actor,
      }: RollbackRequest) => {
        calls.push(`rollback ${id} to ${to}`);
        return newRevision(id, 'rollback', actor, 'DEPLOYED');
      },
      checkRollout: async (id: string) => {
        if (deployments[id].status === 'PROGRESSING')
          deployments[id].status = 'DEPLOYED';
      },
      desiredFor: () => ({ namespace: 'apps', manifests: {} }),
      revisionFor: async () => ({ image: 'img:2', replicas: 4 }),
    } as any,
    traffic: TrafficProviders.create({
      clients: { kubeConfigFor: async () => ({}) } as any,
      providers: [
        {
          id: 'replicas',
          description: 'a canary Deployment',
          detect: async () => true,
          startRefusal: async () => undefined,
          step: async (target: any) => {
            calls.push(`step ${target.cluster.name}`);
            await hooks.duringStep?.(target.cluster.name);
            return { kind: 'reached', message: 'ok' };
          },
          trafficToStable: async () => ({ kind: 'reached', message: 'ok' }),
          ownershipConflict: async () => undefined,
          removeCanary: async (target: any) => {
            calls.push(`remove ${target.cluster.name}`);
            return { kind: 'reached', message: 'ok' };
          },
        },
      ],
    }),
    logger: mockServices.logger.mock(),
    defaultReplicas: 4,
    namespace: 'apps',
    measure: (async (template: any, context: any) => {
      await sleep(20);
      const failing = context.cluster === 'a';
      return {
        template: template.name,
        cluster: context.cluster,
        condition: template.successCondition,
        at: new Date().toISOString(),
        phase: failing ? 'Failed' : 'Successful',
        value: failing ? 0.5 : 0.999,
      };
    }) as any,
  });
  return {
    orchestrator,
    calls,
    clusterReads,
    hooks,
    deployments,
    get record() {
      return record;
    },
    set record(r) {
      record = r;
    },
  };
}

describe('ReleaseOrchestrator ordering', () => {
  it('applies a failure once the wave has settled: a cluster mid-completion is rolled back too, never left on the new revision', async () => {
    const progress = initialProgress([['a', 'b'], ['c']], new Date());
    const now = new Date().toISOString();
    Object.assign(progress.clusters[0], {
      state: 'RUNNING',
      stepIndex: 1,
      weight: 50,
      awaitingPromote: true,
      deploymentId: 'd-a',
      previousRevision: 1,
      mode: 'replicas',
      stepStartedAt: now,
    });
    Object.assign(progress.clusters[1], {
      state: 'COMPLETING',
      stage: 'deploy',
      stepIndex: 3,
      weight: 100,
      deploymentId: 'd-b',
      previousRevision: 1,
      mode: 'replicas',
      passed: ['success-rate'],
      stepStartedAt: now,
    });
    const w = world(progress);
    for (let i = 0; i < 6 && w.record.phase !== 'ROLLED_BACK'; i++)
      await w.orchestrator.tick();
    expect(w.record.phase).toBe('ROLLED_BACK');
    expect(w.record.progress!.abort).toMatchObject({
      cluster: 'a',
      value: 0.5,
    });
    expect(w.record.progress!.clusters.map(c => [c.cluster, c.state])).toEqual([
      ['a', 'ROLLED_BACK'],
      ['b', 'ROLLED_BACK'],
      ['c', 'SKIPPED'],
    ]);
    // b had made revision 2 (the release's); it went back through a rollback revision of 1.
    expect(w.calls).toEqual(
      expect.arrayContaining([
        'deploy b',
        'rollback d-b to 1',
        'rollback d-a to 1',
      ]),
    );
    expect(w.deployments['d-b']).toMatchObject({
      revision: 3,
      status: 'DEPLOYED',
    });
    expect(
      w.calls.filter(c => c.startsWith('deploy') || c.startsWith('step c')),
    ).toEqual(['deploy b']);
  });

  it('hands a cluster this tick started to the rollback when an abort through the API lands meanwhile', async () => {
    const progress = initialProgress([['a'], ['c']], new Date());
    // Wave 1 is done: the tick starts wave 2 (c), and the abort lands while c's first step runs.
    Object.assign(progress.clusters[0], {
      state: 'DONE',
      stepIndex: 3,
      weight: 100,
      deploymentId: 'd-a',
      previousRevision: 1,
      revision: 2,
      mode: 'replicas',
    });
    const w = world(progress);
    w.deployments['d-a'] = { id: 'd-a', revision: 2, status: 'DEPLOYED' };
    w.hooks.duringStep = async cluster => {
      if (cluster !== 'c') return;
      const current = w.record;
      const t = new Transition(
        current.id,
        structuredClone(current.progress!),
        Date.now(),
      );
      applySteering(t, strategy, 'abort', 'user:default/grace', () => true);
      w.record = {
        ...current,
        progress: t.progress,
        phase: t.progress.phase,
        version: current.version + 1,
      };
    };
    await w.orchestrator.tick();
    expect(w.calls).toContain('step c');
    const c = w.record.progress!.clusters.find(x => x.cluster === 'c')!;
    expect(c).toMatchObject({
      state: 'ROLLING_BACK',
      deploymentId: 'd-c',
      previousRevision: 1,
    });
    w.hooks.duringStep = undefined;
    for (let i = 0; i < 6 && w.record.phase !== 'ROLLED_BACK'; i++)
      await w.orchestrator.tick();
    expect(w.record.progress!.clusters.map(x => [x.cluster, x.state])).toEqual([
      ['a', 'ROLLED_BACK'],
      ['c', 'ROLLED_BACK'],
    ]);
    expect(w.calls).toContain('remove c');
  });

  it("reads only the clusters of the wave it runs, and the release's others once it fails", async () => {
    const running = (progress: ReleaseProgress, cluster: string) =>
      Object.assign(progress.clusters.find(c => c.cluster === cluster)!, {
        state: 'RUNNING',
        stepIndex: 1,
        weight: 50,
        awaitingPromote: true,
        deploymentId: `d-${cluster}`,
        previousRevision: 1,
        mode: 'replicas',
        stepStartedAt: new Date().toISOString(),
      });
    const passing = initialProgress([['b'], ['c', 'a']], new Date());
    running(passing, 'b');
    const quiet = world(passing);
    await quiet.orchestrator.tick();
    expect(quiet.record.phase).toBe('PROGRESSING');
    expect(quiet.clusterReads).toEqual([['b']]);

    // a's analysis fails: the abort reads the clusters it sends back or leaves pending.
    const failing = initialProgress([['a'], ['b', 'c']], new Date());
    running(failing, 'a');
    const aborted = world(failing);
    await aborted.orchestrator.tick();
    expect(aborted.record.phase).not.toBe('PROGRESSING');
    expect(aborted.clusterReads).toEqual([['a'], ['b', 'c']]);
  });
});
