import { mockServices } from '@backstage/backend-test-utils';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { SimObject } from '@cnp/kube-simulator';
import type { Deployment, DeploymentStatus } from '@cnp/plugin-fleet-common';
import type { FleetStores } from '../database/types';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet, seedDeployment } from '../testing/fleet';
import { DeploymentService } from './DeploymentService';
import { ManifestApplier } from './ManifestApplier';
import { ManifestRemover } from './ManifestRemover';
import { settled } from '../testing/deployStack';
import { eventually } from '../testing/eventually';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['alpha', 'bravo', 'charlie'],
  readyDelayMs: 100,
});

/** The objects Fleet put in a cluster (the simulator's own defaults left out). */
/** Whether the cluster's controllers made it (a ReplicaSet, a Pod, an Event), not an apply. */
function madeByControllers(o: SimObject): boolean {
  return o.kind === 'Event' || !!(o.metadata as any).ownerReferences;
}
function fleetObjects(cluster: string): SimObject[] {
  return sim
    .objects(cluster)
    .filter(
      o =>
        (o.metadata as any)?.labels?.['app.kubernetes.io/managed-by'] ===
          'fleet' &&
        o.kind !== 'Namespace' &&
        !madeByControllers(o),
    );
}
function liveObject(cluster: string, kind: string, name: string): any {
  return sim
    .objects(cluster)
    .find(o => o.kind === kind && (o.metadata as any).name === name);
}

describe.each(databases.eachSupportedId())(
  'deploy flow against the kube simulator (%s)',
  databaseId => {
    const services: DeploymentService[] = [];
    afterEach(() => Promise.all(services.splice(0).map(s => s.stop())));

    async function setup(
      opts: {
        probe?: boolean;
        namespace?: string;
        progressDeadlineMs?: number;
      } = {},
    ) {
      const knex = await databases.init(databaseId);
      const harness = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
      });
      if (opts.probe ?? true) await harness.worker.runCycle();
      else await harness.discovery.run();
      const listener = { deploymentProgressed: jest.fn() };
      const deployments = DeploymentService.create({
        listener,
        stores: harness.stores,
        applier: ManifestApplier.create({ clients: harness.clients }),
        remover: ManifestRemover.create({ clients: harness.clients }),
        logger: harness.logger,
        deploy: {
          namespace:
            opts.namespace ??
            `apps-${databaseId.toLowerCase().replace(/_/g, '-')}`,
          defaultReplicas: 3,
          progressDeadlineMs: opts.progressDeadlineMs ?? 5_000,
          pollIntervalMs: 50,
        },
      });
      services.push(deployments);
      return {
        ...harness,
        deployments,
        listener,
        namespace:
          opts.namespace ??
          `apps-${databaseId.toLowerCase().replace(/_/g, '-')}`,
      };
    }

    it('deploys for real: PENDING -> PROGRESSING -> DEPLOYED, every change an event', async () => {
      const { stores, deployments, namespace } = await setup();
      const entity = `web-${databaseId.toLowerCase()}`;
      const started = await deployments.deploy(
        {
          entityRef: `component:default/${entity}`,
          cluster: 'alpha',
          image: 'nginx:1.27',
        },
        'user:default/ada',
      );
      expect(started).toMatchObject({
        status: 'PROGRESSING',
        cluster: 'alpha',
        image: 'nginx:1.27',
        revision: 1,
        clusterStatus: 'ONLINE',
      });
      const done = await settled(stores, started.id);
      expect(done).toMatchObject({ status: 'DEPLOYED', syncStatus: 'SYNCED' });
      expect(done.lastAppliedAt).toBeDefined();

      const events = await stores.events.listEvents({
        subjectKind: 'deployment',
        subject: started.id,
      });
      expect(events.map(e => `${e.from ?? ''}->${e.to}`)).toEqual([
        'PROGRESSING->DEPLOYED',
        'PENDING->PROGRESSING',
        '->PENDING',
      ]);
      expect(events[2].actor).toBe('user:default/ada');

      const kinds = fleetObjects('alpha')
        .filter(o => (o.metadata as any).namespace === namespace)
        .map(o => o.kind)
        .sort();
      expect(kinds).toEqual(['Deployment', 'PodDisruptionBudget', 'Service']);
      expect(
        sim
          .objects('alpha')
          .some(
            o =>
              o.kind === 'Namespace' && (o.metadata as any).name === namespace,
          ),
      ).toBe(true);
      const app = await stores.applications.getApplicationByEntityRef(
        `component:default/${entity}`,
      );
      expect(app).toMatchObject({
        origin: 'imported',
        spec: { image: 'nginx:1.27' },
      });
    });

    it('is idempotent: deploying the same spec twice succeeds and leaves the live spec and generation unchanged', async () => {
      const { stores, deployments, namespace } = await setup();
      const ref = `component:default/idem-${databaseId
        .toLowerCase()
        .replace(/_/g, '-')}`;
      const first = await deployments.deploy(
        { entityRef: ref, cluster: 'bravo', image: 'nginx:1.27', replicas: 2 },
        'test',
      );
      await settled(stores, first.id);
      const name = (await stores.applications.getApplicationByEntityRef(ref))!
        .name;
      const before = {
        deployment: liveObject('bravo', 'Deployment', name),
        service: liveObject('bravo', 'Service', name),
        pdb: liveObject('bravo', 'PodDisruptionBudget', name),
      };
      expect(before.deployment.metadata.namespace).toBe(namespace);

      const second = await deployments.deploy(
        { entityRef: ref, cluster: 'bravo', image: 'nginx:1.27', replicas: 2 },
        'test',
      );
      expect(second.id).toBe(first.id);
      expect(second.revision).toBe(2);
      expect(await settled(stores, second.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      const after = {
        deployment: liveObject('bravo', 'Deployment', name),
        service: liveObject('bravo', 'Service', name),
        pdb: liveObject('bravo', 'PodDisruptionBudget', name),
      };
      expect(after.deployment.metadata.generation).toBe(
        before.deployment.metadata.generation,
      );
      expect(after.deployment.spec).toEqual(before.deployment.spec);
      expect(after.service.spec).toEqual(before.service.spec);
      expect(after.pdb.metadata.generation).toBe(
        before.pdb.metadata.generation,
      );
      expect(after.pdb.spec).toEqual(before.pdb.spec);
    });

    it('lands in the cluster that was picked and nowhere else', async () => {
      const { stores, deployments } = await setup();
      const ref = `component:default/only-b-${databaseId
        .toLowerCase()
        .replace(/_/g, '-')}`;
      const before = {
        alpha: sim.requestCount('alpha'),
        charlie: sim.requestCount('charlie'),
      };
      const d = await deployments.deploy(
        { entityRef: ref, cluster: 'bravo', image: 'nginx:1.27' },
        'test',
      );
      await settled(stores, d.id);
      const name = (await stores.applications.getApplicationByEntityRef(ref))!
        .name;
      expect(liveObject('bravo', 'Deployment', name)).toBeDefined();
      expect(liveObject('alpha', 'Deployment', name)).toBeUndefined();
      expect(liveObject('charlie', 'Deployment', name)).toBeUndefined();
      expect(sim.requestCount('alpha')).toBe(before.alpha);
      expect(sim.requestCount('charlie')).toBe(before.charlie);
    });

    it('replaces a changed Service keeping its clusterIP', async () => {
      const { stores, deployments } = await setup();
      const ref = `component:default/svc-${databaseId
        .toLowerCase()
        .replace(/_/g, '-')}`;
      const d = await deployments.deploy(
        { entityRef: ref, cluster: 'charlie', image: 'nginx:1.27' },
        'test',
      );
      await settled(stores, d.id);
      const app = (await stores.applications.getApplicationByEntityRef(ref))!;
      const before = liveObject('charlie', 'Service', app.name);
      await deployments.updateApplication(app.id, { spec: { port: 9000 } });
      await settled(
        stores,
        (
          await deployments.deploy(
            { entityRef: ref, cluster: 'charlie' },
            'test',
          )
        ).id,
      );
      const after = liveObject('charlie', 'Service', app.name);
      expect(after.spec.ports[0].targetPort).toBe(9000);
      expect(after.spec.clusterIP).toBe(before.spec.clusterIP);
      expect(after.metadata.resourceVersion).not.toBe(
        before.metadata.resourceVersion,
      );
    });

    it('refuses an OFFLINE cluster with a ConflictError and writes nothing to Kubernetes', async () => {
      const { stores, worker, deployments } = await setup();
      sim.setFault('charlie', { mode: 'down' });
      await worker.runCycle();
      await worker.runCycle();
      expect((await stores.clusters.getCluster('charlie'))!.status).toBe(
        'OFFLINE',
      );
      const requests = sim.requestCount('charlie');
      await expect(
        deployments.deploy(
          {
            entityRef: 'component:default/refused',
            cluster: 'charlie',
            image: 'nginx:1.27',
          },
          'test',
        ),
      ).rejects.toMatchObject({ name: 'ConflictError' });
      expect(sim.requestCount('charlie')).toBe(requests);
      expect(
        await stores.deployments.listDeployments({ cluster: 'charlie' }),
      ).toEqual([]);
    });

    it('proceeds on an UNKNOWN (never probed) cluster', async () => {
      const { stores, deployments } = await setup({ probe: false });
      expect((await stores.clusters.getCluster('alpha'))!.status).toBe(
        'UNKNOWN',
      );
      const d = await deployments.deploy(
        {
          entityRef: 'component:default/early',
          cluster: 'alpha',
          image: 'nginx:1.27',
        },
        'test',
      );
      expect(d.clusterStatus).toBe('UNKNOWN');
      expect(await settled(stores, d.id)).toMatchObject({ status: 'DEPLOYED' });
    });

    it('records FAILED / CLUSTER_NOT_CONFIGURED for a cluster without a readable kubeconfig', async () => {
      const { stores, deployments } = await setup();
      await stores.clusters.insertCluster({
        name: 'vaulted',
        endpoint: 'https://10.9.9.9:6443',
        kubeconfigRef: 'secret/vaulted',
        source: 'manual',
      });
      const d = await deployments.deploy(
        {
          entityRef: 'component:default/web',
          cluster: 'vaulted',
          image: 'nginx:1.27',
        },
        'test',
      );
      expect(d).toMatchObject({
        status: 'FAILED',
        statusReason: 'CLUSTER_NOT_CONFIGURED',
      });
      expect(d.message).toContain('opaque reference');
    });

    it.each([
      ['error', /HTTP 500/],
      ['down', /socket hang up|ECONNRESET/],
    ] as const)(
      'records FAILED / APPLY_FAILED with the API message when the cluster is in %s mode',
      async (mode, message) => {
        const { deployments } = await setup();
        sim.setFault('bravo', { mode });
        const d = await deployments.deploy(
          {
            entityRef: `component:default/broken-${mode}`,
            cluster: 'bravo',
            image: 'nginx:1.27',
          },
          'test',
        );
        expect(d).toMatchObject({
          status: 'FAILED',
          statusReason: 'APPLY_FAILED',
        });
        expect(d.message).toMatch(message);
      },
    );

    const imageOn = (cluster: string, namespace: string, name: string) =>
      sim
        .objects(cluster)
        .find(
          o =>
            o.kind === 'Deployment' &&
            (o.metadata as any).name === name &&
            (o.metadata as any).namespace === namespace,
        )?.spec?.template?.spec?.containers?.[0]?.image;

    it("deploys to the application's own namespace, refuses system ones, and keeps it while deployed", async () => {
      const { stores, deployments } = await setup();
      await expect(
        deployments.registerApplication({
          entityRef: 'component:default/sneaky',
          spec: { image: 'x:1', namespace: 'kube-system' },
        }),
      ).rejects.toMatchObject({ name: 'InputError' });
      const ns = `team-${databaseId.toLowerCase().replace(/_/g, '-')}`;
      const app = await deployments.registerApplication({
        entityRef: 'component:default/namespaced',
        spec: { image: 'namespaced:1.0.0', namespace: ns },
      });
      const d = await deployments.deploy(
        { entityRef: app.entityRef, cluster: 'alpha' },
        'test',
      );
      expect(await settled(stores, d.id)).toMatchObject({ status: 'DEPLOYED' });
      expect(
        sim
          .objects('alpha')
          .filter(
            o =>
              (o.metadata as any).name === 'namespaced' &&
              o.kind === 'Deployment',
          )
          .map(o => (o.metadata as any).namespace),
      ).toContain(ns);
      // Not in the service's default namespace.
      expect(
        sim
          .objects('alpha')
          .some(
            o =>
              (o.metadata as any).name === 'namespaced' &&
              (o.metadata as any).namespace !== ns &&
              !(o.metadata as any).namespace.startsWith('team-'),
          ),
      ).toBe(false);
      expect((await stores.revisions.getRevision(d.id, 1))!.namespace).toBe(ns);
      await expect(
        deployments.updateApplication(app.id, {
          spec: { namespace: `${ns}-other` },
        }),
      ).rejects.toMatchObject({ name: 'ConflictError' });
    });

    it("merges the placement's per-cluster overrides, in order, into the revisions made for a matching cluster", async () => {
      const { stores, deployments } = await setup();
      await stores.clusters.updateClusterSettings('bravo', {
        labels: { region: 'eu' },
      });
      const app = await deployments.registerApplication({
        entityRef: 'component:default/regional',
        spec: { image: 'regional:1.0.0', replicas: 2, env: { MODE: 'live' } },
        placement: {
          overrides: [
            {
              clusterSelector: { region: 'eu' },
              replicas: 4,
              env: { REGION: 'eu' },
            },
            { clusters: ['bravo'], env: { TIER: 'gold' } },
          ],
        },
      });
      const onBravo = await deployments.deploy(
        { entityRef: app.entityRef, cluster: 'bravo' },
        'test',
      );
      const onAlpha = await deployments.deploy(
        { entityRef: app.entityRef, cluster: 'alpha' },
        'test',
      );
      const bravo = (await stores.revisions.getRevision(onBravo.id, 1))!;
      expect([bravo.replicas, bravo.env]).toEqual([
        4,
        { MODE: 'live', REGION: 'eu', TIER: 'gold' },
      ]);
      const alpha = (await stores.revisions.getRevision(onAlpha.id, 1))!;
      expect([alpha.replicas, alpha.env]).toEqual([2, { MODE: 'live' }]);
      await settled(stores, onBravo.id);
      await settled(stores, onAlpha.id);
      await stores.clusters.updateClusterSettings('bravo', { labels: {} });
    });

    it('rolls back to a revision by re-applying exactly its spec, as a new revision', async () => {
      const { stores, deployments, namespace } = await setup();
      const entityRef = 'component:default/rolling';
      const first = await deployments.deploy(
        { entityRef, cluster: 'charlie', image: 'rolling:1.0.0', replicas: 2 },
        'test',
      );
      expect(await settled(stores, first.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      await expect(
        deployments.rollback({ deploymentId: first.id, actor: 'test' }),
      ).rejects.toMatchObject({ name: 'ConflictError' });
      const second = await deployments.deploy(
        { entityRef, cluster: 'charlie', image: 'rolling:2.0.0', replicas: 4 },
        'test',
      );
      expect(await settled(stores, second.id)).toMatchObject({
        revision: 2,
        status: 'DEPLOYED',
      });
      expect(imageOn('charlie', namespace, 'rolling')).toBe('rolling:2.0.0');

      const back = await deployments.rollback({
        deploymentId: first.id,
        actor: 'ada',
      });
      expect(await settled(stores, back.id)).toMatchObject({
        status: 'DEPLOYED',
        revision: 3,
        image: 'rolling:1.0.0',
      });
      const live = () =>
        sim
          .objects('charlie')
          .find(
            o =>
              o.kind === 'Deployment' &&
              (o.metadata as any).name === 'rolling' &&
              (o.metadata as any).namespace === namespace,
          ) as any;
      expect(live().spec.template.spec.containers[0].image).toBe(
        'rolling:1.0.0',
      );
      expect(live().spec.replicas).toBe(2);
      const forward = await deployments.rollback({
        deploymentId: first.id,
        toRevision: 2,
        actor: 'ada',
      });
      expect(await settled(stores, forward.id)).toMatchObject({
        revision: 4,
        image: 'rolling:2.0.0',
      });
      expect(live().spec.replicas).toBe(4);
      expect(
        (await stores.revisions.listRevisions(first.id)).map(r => [
          r.revision,
          r.image,
          r.replicas,
          r.cause,
          r.createdBy,
        ]),
      ).toEqual([
        [4, 'rolling:2.0.0', 4, 'rollback', 'ada'],
        [3, 'rolling:1.0.0', 2, 'rollback', 'ada'],
        [2, 'rolling:2.0.0', 4, 'deploy', 'test'],
        [1, 'rolling:1.0.0', 2, 'deploy', 'test'],
      ]);
      await expect(
        deployments.rollback({
          deploymentId: first.id,
          toRevision: 99,
          actor: 'test',
        }),
      ).rejects.toMatchObject({ name: 'NotFoundError' });
    });

    /** Waits until the deployment is on `revision`. */
    async function onRevision(
      stores: FleetStores,
      id: string,
      revision: number,
    ) {
      await eventually(async () =>
        expect(
          (await stores.deployments.getDeployment(id))!.revision,
        ).toBeGreaterThanOrEqual(revision),
      );
    }

    it('rolls a revision that misses its deadline back to the last DEPLOYED one, once', async () => {
      const { stores, deployments, namespace } = await setup({
        progressDeadlineMs: 1_000,
      });
      const entityRef = 'component:default/canary-bird';
      const good = await deployments.deploy(
        { entityRef, cluster: 'alpha', image: 'bird:1.0.0' },
        'test',
      );
      await settled(stores, good.id);
      sim.setReadiness('alpha', { neverReady: true });
      const bad = await deployments.deploy(
        { entityRef, cluster: 'alpha', image: 'bird:2.0.0' },
        'test',
      );
      expect(bad.revision).toBe(2);
      await onRevision(stores, bad.id, 3);
      sim.setReadiness('alpha', { neverReady: false, readyDelayMs: 100 });
      const done = await settled(stores, bad.id);
      expect(done).toMatchObject({
        status: 'DEPLOYED',
        statusReason: 'ROLLED_BACK',
        revision: 3,
        image: 'bird:1.0.0',
      });
      expect(imageOn('alpha', namespace, 'canary-bird')).toBe('bird:1.0.0');
      const events = await stores.events.listEvents({
        subjectKind: 'deployment',
        subject: bad.id,
      });
      const rolledBack = events.filter(e => e.reason === 'AUTO_ROLLED_BACK');
      expect(rolledBack).toHaveLength(1);
      expect(rolledBack[0].message).toContain(
        'Revision 2 failed (Rollout missed its deadline: Rollout not complete',
      );
      expect(rolledBack[0].message).toContain('back to revision 1');
      expect(
        (await stores.revisions.listRevisions(bad.id)).map(r => [
          r.revision,
          r.cause,
          r.outcome,
          r.outcomeReason,
        ]),
      ).toEqual([
        [3, 'auto-rollback', 'DEPLOYED', null],
        [2, 'deploy', 'FAILED', 'PROGRESS_DEADLINE_EXCEEDED'],
        [1, 'deploy', 'DEPLOYED', null],
      ]);
    });

    it("fails a first deploy of a ':broken' image, and rolls a ':crashloop' one back", async () => {
      // The simulator's image switches: pods of a tag ending in `broken` never become ready, of
      // one ending in `crashloop` crash-loop; the cluster's other workloads are unaffected.
      const { stores, deployments, namespace } = await setup({
        progressDeadlineMs: 800,
      });
      const broken = await deployments.deploy(
        {
          entityRef: 'component:default/tag-broken',
          cluster: 'charlie',
          image: 'shop:broken',
        },
        'test',
      );
      expect(await settled(stores, broken.id)).toMatchObject({
        status: 'FAILED',
        statusReason: 'PROGRESS_DEADLINE_EXCEEDED',
        revision: 1,
      });

      const entityRef = 'component:default/tag-crash';
      const good = await deployments.deploy(
        { entityRef, cluster: 'charlie', image: 'shop:1.0.0' },
        'test',
      );
      expect(await settled(stores, good.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      await deployments.deploy(
        { entityRef, cluster: 'charlie', image: 'shop:1.1.0-crashloop' },
        'test',
      );
      await onRevision(stores, good.id, 3);
      expect(await settled(stores, good.id)).toMatchObject({
        status: 'DEPLOYED',
        statusReason: 'ROLLED_BACK',
        image: 'shop:1.0.0',
      });
      expect(imageOn('charlie', namespace, 'tag-crash')).toBe('shop:1.0.0');
      expect(
        (await stores.revisions.listRevisions(good.id)).map(r => [
          r.revision,
          r.outcome,
          r.outcomeReason,
        ]),
      ).toEqual([
        [3, 'DEPLOYED', null],
        [2, 'FAILED', 'PROGRESS_DEADLINE_EXCEEDED'],
        [1, 'DEPLOYED', null],
      ]);
    });

    it('never rolls back an automatic rollback, and not at all with autoRollback: false', async () => {
      const { stores, deployments } = await setup({
        progressDeadlineMs: 600,
      });
      const entityRef = 'component:default/stubborn';
      const good = await deployments.deploy(
        { entityRef, cluster: 'bravo', image: 'stubborn:1.0.0' },
        'test',
      );
      await settled(stores, good.id);
      sim.setReadiness('bravo', { neverReady: true });
      await deployments.deploy(
        { entityRef, cluster: 'bravo', image: 'stubborn:2.0.0' },
        'test',
      );
      // The rollback fails too (the cluster stays unready): FAILED on revision 3, and no more.
      await onRevision(stores, good.id, 3);
      const failed = await settled(stores, good.id);
      expect(failed).toMatchObject({ status: 'FAILED', revision: 3 });
      await new Promise(r => setTimeout(r, 1_500));
      expect((await stores.deployments.getDeployment(good.id))!.revision).toBe(
        3,
      );

      const other = 'component:default/no-undo';
      const kept = await deployments.deploy(
        { entityRef: other, cluster: 'charlie', image: 'no-undo:1.0.0' },
        'test',
      );
      await settled(stores, kept.id);
      const app = (await stores.applications.getApplicationByEntityRef(other))!;
      await deployments.updateApplication(app.id, {
        spec: { autoRollback: false },
      });
      sim.setReadiness('charlie', { neverReady: true });
      await deployments.deploy(
        { entityRef: other, cluster: 'charlie', image: 'no-undo:2.0.0' },
        'test',
      );
      expect(await settled(stores, kept.id)).toMatchObject({
        status: 'FAILED',
        revision: 2,
      });
      await new Promise(r => setTimeout(r, 1_000));
      expect((await stores.deployments.getDeployment(kept.id))!.revision).toBe(
        2,
      );
    });

    /** Waits until the deployment is gone from every list. */
    async function gone(stores: FleetStores, id: string) {
      await eventually(async () =>
        expect(await stores.deployments.getDeployment(id)).toBeFalsy(),
      );
    }

    it("undeploys: deletes Fleet's Deployment, Service and PDB, keeps what is not Fleet's, keeps history", async () => {
      const { stores, deployments, namespace } = await setup();
      const entityRef = 'component:default/leaving';
      const d = await deployments.deploy(
        { entityRef, cluster: 'bravo', image: 'leaving:1.0.0', replicas: 2 },
        'test',
      );
      await settled(stores, d.id);
      const named = () =>
        sim
          .objects('bravo')
          .filter(
            o =>
              (o.metadata as any).namespace === namespace &&
              (o.metadata as any).name?.startsWith('leaving'),
          );
      const ours = () =>
        named()
          .filter(o => !madeByControllers(o))
          .map(o => o.kind)
          .sort();
      // The Deployment's ReplicaSet and its 2 pods run too.
      expect(
        named()
          .filter(o => o.kind === 'Pod' || o.kind === 'ReplicaSet')
          .map(o => o.kind)
          .sort(),
      ).toEqual(['Pod', 'Pod', 'ReplicaSet']);
      expect(ours()).toEqual(['Deployment', 'PodDisruptionBudget', 'Service']);
      // Someone else's PDB under Fleet's name: not Fleet's object, so it must survive.
      const pdb = sim
        .objects('bravo')
        .find(
          o =>
            o.kind === 'PodDisruptionBudget' &&
            (o.metadata as any).namespace === namespace &&
            (o.metadata as any).name === 'leaving',
        )!;
      sim.drift('bravo', {
        kind: 'PodDisruptionBudget',
        namespace,
        name: 'leaving',
        patch: {
          metadata: {
            labels: { 'app.kubernetes.io/managed-by': 'someone-else' },
          },
        },
      });
      expect(pdb).toBeDefined();

      const removing = await deployments.undeploy(d.id, {}, 'ada');
      expect(removing.status).toBe('REMOVING');
      await gone(stores, d.id);
      expect(ours()).toEqual(['PodDisruptionBudget']);
      // With the Deployment gone, the cluster collects its ReplicaSet and pods.
      expect(
        named().filter(o => o.kind === 'Pod' || o.kind === 'ReplicaSet'),
      ).toEqual([]);
      expect(
        (await stores.revisions.listRevisions(d.id)).map(r => r.revision),
      ).toEqual([1]);
      const events = await stores.events.listEvents({
        subjectKind: 'deployment',
        subject: d.id,
      });
      expect(events[0]).toMatchObject({
        from: 'REMOVING',
        to: 'REMOVED',
        reason: 'UNDEPLOYED',
        actor: 'fleet-undeploy',
      });
      expect(events[0].message).toContain(
        "left PodDisruptionBudget/leaving (not Fleet's objects",
      );
      expect(events[1]).toMatchObject({ to: 'REMOVING', actor: 'ada' });
    });

    it('removes an application: undeploys it everywhere, places it nowhere, then it goes', async () => {
      const { stores, deployments } = await setup();
      const entityRef = 'component:default/retired';
      const a = await deployments.deploy(
        { entityRef, cluster: 'alpha', image: 'retired:1.0.0' },
        'test',
      );
      const b = await deployments.deploy(
        { entityRef, cluster: 'bravo', image: 'retired:1.0.0' },
        'test',
      );
      await settled(stores, a.id);
      await settled(stores, b.id);
      const app = (await stores.applications.getApplicationByEntityRef(
        entityRef,
      ))!;
      expect(app.removing).toBe(false);
      const removing = await deployments.removeApplication(app.id, 'ada');
      expect(removing.removing).toBe(true);
      await gone(stores, a.id);
      await gone(stores, b.id);
      await eventually(async () =>
        expect(
          await stores.applications.getApplication(app.id),
        ).toBeUndefined(),
      );
      // Its revisions stay readable.
      expect(await stores.revisions.listRevisions(a.id)).toHaveLength(1);
      await expect(
        deployments.removeApplication(app.id, 'ada'),
      ).rejects.toMatchObject({ name: 'NotFoundError' });
    });

    it('refuses what would race an undeploy: undeploying a deploy being applied, deploying or rolling back what is being removed', async () => {
      const { stores, deployments, worker } = await setup();
      const entityRef = 'component:default/racy';
      const d = await deployments.deploy(
        { entityRef, cluster: 'charlie', image: 'racy:1.0.0' },
        'test',
      );
      await settled(stores, d.id);
      // A PENDING deployment: its apply runs.
      await stores.deployments.updateDeploymentStatus(
        d.id,
        { status: 'PENDING' },
        'test',
      );
      await expect(deployments.undeploy(d.id, {}, 'ada')).rejects.toMatchObject(
        { name: 'ConflictError' },
      );
      await stores.deployments.updateDeploymentStatus(
        d.id,
        { status: 'DEPLOYED' },
        'test',
      );
      // REMOVING and waiting for its cluster: a deploy or a rollback must not revive it.
      sim.setFault('charlie', { mode: 'down' });
      await worker.runCycle();
      await worker.runCycle();
      await deployments.undeploy(d.id, {}, 'ada');
      sim.setFault('charlie', { mode: 'ok' });
      await worker.runCycle();
      await expect(
        deployments.deploy(
          { entityRef, cluster: 'charlie', image: 'racy:2.0.0' },
          'test',
        ),
      ).rejects.toMatchObject({ name: 'ConflictError' });
      await expect(
        deployments.rollback({
          deploymentId: d.id,
          toRevision: 1,
          actor: 'test',
        }),
      ).rejects.toMatchObject({ name: 'ConflictError' });
      expect(await stores.deployments.getDeployment(d.id)).toMatchObject({
        status: 'REMOVING',
        revision: 1,
      });
      expect(await deployments.finishRemoval(d.id)).toBe(true);
    });

    it('undeploys from an OFFLINE cluster once it is back; force forgets at once; the cluster can then go', async () => {
      const { stores, deployments, worker, namespace } = await setup();
      const entityRef = 'component:default/away';
      const d = await deployments.deploy(
        { entityRef, cluster: 'charlie', image: 'away:1.0.0' },
        'test',
      );
      await settled(stores, d.id);
      sim.setFault('charlie', { mode: 'down' });
      await worker.runCycle();
      await worker.runCycle();
      expect((await stores.clusters.getCluster('charlie'))!.status).toBe(
        'OFFLINE',
      );
      await deployments.undeploy(d.id, {}, 'ada');
      await new Promise(r => setTimeout(r, 200));
      expect(await stores.deployments.getDeployment(d.id)).toMatchObject({
        status: 'REMOVING',
      });
      expect(await deployments.finishRemoval(d.id)).toBe(false);

      sim.setFault('charlie', { mode: 'ok' });
      await worker.runCycle();
      expect(await deployments.finishRemoval(d.id)).toBe(true);
      expect(await stores.deployments.getDeployment(d.id)).toBeUndefined();
      expect(
        sim
          .objects('charlie')
          .filter(
            o =>
              (o.metadata as any).namespace === namespace &&
              (o.metadata as any).name === 'away',
          ),
      ).toEqual([]);

      const other = await deployments.deploy(
        {
          entityRef: 'component:default/forgotten',
          cluster: 'charlie',
          image: 'x:1',
        },
        'test',
      );
      await settled(stores, other.id);
      const forced = await deployments.undeploy(
        other.id,
        { force: true },
        'ada',
      );
      expect(forced.status).toBe('REMOVING');
      expect(await stores.deployments.getDeployment(other.id)).toBeUndefined();
      const [last] = await stores.events.listEvents({
        subjectKind: 'deployment',
        subject: other.id,
      });
      expect(last).toMatchObject({ to: 'REMOVED', reason: 'FORGOTTEN' });
      expect(last.message).toContain('may remain');
      expect(
        await stores.deployments.listDeployments({ cluster: 'charlie' }),
      ).toEqual([]);
    });

    it('ends FAILED / PROGRESS_DEADLINE_EXCEEDED when the workload never becomes ready', async () => {
      const { stores, deployments, listener } = await setup({
        progressDeadlineMs: 2_000,
      });
      sim.setReadiness('alpha', { neverReady: true });
      const d = await deployments.deploy(
        {
          entityRef: 'component:default/stuck',
          cluster: 'alpha',
          image: 'nginx:1.27',
        },
        'test',
      );
      expect(d.status).toBe('PROGRESSING');
      const done = await settled(stores, d.id);
      expect(done).toMatchObject({
        status: 'FAILED',
        statusReason: 'PROGRESS_DEADLINE_EXCEEDED',
      });
      expect(done.message).toMatch(/^Rollout not complete after 2 s/);
      // Meanwhile the deployment said what the rollout waited for, and the card was told.
      expect(listener.deploymentProgressed).toHaveBeenCalledWith({
        deploymentId: d.id,
        entityRef: 'component:default/stuck',
        cluster: 'alpha',
      });
      const events = await stores.events.listEvents({
        subjectKind: 'deployment',
        subject: d.id,
      });
      expect(events[0]).toMatchObject({
        from: 'PROGRESSING',
        to: 'FAILED',
        reason: 'PROGRESS_DEADLINE_EXCEEDED',
      });
    });

    it('refuses a deploy with no image anywhere with an InputError, and an unknown cluster with a NotFoundError', async () => {
      const { deployments, stores } = await setup();
      await expect(
        deployments.deploy(
          { entityRef: 'component:default/noimage', cluster: 'alpha' },
          'test',
        ),
      ).rejects.toMatchObject({ name: 'InputError' });
      await expect(
        deployments.deploy(
          { entityRef: 'component:default/x', cluster: 'nope', image: 'x' },
          'test',
        ),
      ).rejects.toMatchObject({ name: 'NotFoundError' });
      expect(await stores.applications.listApplications()).toEqual([]);
    });

    it('refuses to move an application onto an OFFLINE cluster, allows UNKNOWN and ONLINE', async () => {
      const { stores, worker, deployments } = await setup();
      const app = await deployments.registerApplication({
        entityRef: 'component:default/placed',
        origin: 'scaffolded',
        spec: { image: 'nginx:1.27' },
      });
      expect(app.origin).toBe('scaffolded');
      sim.setFault('charlie', { mode: 'down' });
      await worker.runCycle();
      await worker.runCycle();
      await expect(
        deployments.updateApplication(app.id, {
          placement: { clusters: ['charlie'] },
        }),
      ).rejects.toMatchObject({ name: 'ConflictError' });
      await expect(
        deployments.updateApplication(app.id, {
          placement: { clusters: ['nope'] },
        }),
      ).rejects.toMatchObject({ name: 'InputError' });
      await stores.clusters.insertCluster({
        name: 'later',
        endpoint: 'https://10.0.0.1',
        kubeconfigRef: 'x',
        source: 'manual',
      });
      const moved = await deployments.updateApplication(app.id, {
        placement: { clusters: ['alpha', 'later'] },
      });
      expect(moved.placement).toEqual({ clusters: ['alpha', 'later'] });
    });

    it('cascades on deployments made by this flow and restores only those (end to end)', async () => {
      const { stores, worker, deployments } = await setup({
        progressDeadlineMs: 1_000,
      });
      const healthy = await settled(
        stores,
        (
          await deployments.deploy(
            {
              entityRef: 'component:default/healthy',
              cluster: 'bravo',
              image: 'nginx:1.27',
            },
            'test',
          )
        ).id,
      );
      expect(healthy.status).toBe('DEPLOYED');
      sim.setReadiness('bravo', { neverReady: true });
      const failed = await settled(
        stores,
        (
          await deployments.deploy(
            {
              entityRef: 'component:default/stuck',
              cluster: 'bravo',
              image: 'nginx:1.27',
            },
            'test',
          )
        ).id,
      );
      expect(failed).toMatchObject({
        status: 'FAILED',
        statusReason: 'PROGRESS_DEADLINE_EXCEEDED',
      });
      sim.setReadiness('bravo', { neverReady: false });
      const sick = await seedDeployment(
        stores,
        'bravo',
        'sick',
        'DEGRADED',
        'WORKLOAD_UNHEALTHY',
      );

      sim.setFault('bravo', { mode: 'down' });
      await worker.runCycle();
      await worker.runCycle();
      const statusOf = async (
        d: Deployment,
      ): Promise<[DeploymentStatus, string | null]> => {
        const now = (await stores.deployments.getDeployment(d.id))!;
        return [now.status, now.statusReason];
      };
      expect(await statusOf(healthy)).toEqual(['DEGRADED', 'CLUSTER_OFFLINE']);
      expect(await statusOf(failed)).toEqual([
        'FAILED',
        'PROGRESS_DEADLINE_EXCEEDED',
      ]);
      expect(await statusOf(sick)).toEqual(['DEGRADED', 'WORKLOAD_UNHEALTHY']);

      sim.setFault('bravo', { mode: 'ok' });
      await worker.runCycle();
      expect(await statusOf(healthy)).toEqual(['DEPLOYED', null]);
      expect(await statusOf(failed)).toEqual([
        'FAILED',
        'PROGRESS_DEADLINE_EXCEEDED',
      ]);
      expect(await statusOf(sick)).toEqual(['DEGRADED', 'WORKLOAD_UNHEALTHY']);
    });
    it('gives components of other namespaces, or with cleaned names, their own object names', async () => {
      const { stores, deployments } = await setup();
      const a = await settled(
        stores,
        (
          await deployments.deploy(
            {
              entityRef: 'component:team-a/web',
              cluster: 'alpha',
              image: 'nginx:1.27',
            },
            'test',
          )
        ).id,
      );
      const b = await settled(
        stores,
        (
          await deployments.deploy(
            {
              entityRef: 'component:team-b/web',
              cluster: 'alpha',
              image: 'nginx:1.26',
            },
            'test',
          )
        ).id,
      );
      expect([a.status, b.status]).toEqual(['DEPLOYED', 'DEPLOYED']);
      const names = (await stores.applications.listApplications()).map(
        app => app.name,
      );
      expect(new Set(names).size).toBe(names.length);
      expect(names.filter(n => n.startsWith('team-a-web-'))).toHaveLength(1);
      expect(names.filter(n => n.startsWith('team-b-web-'))).toHaveLength(1);
    });

    it("never patches an object of the same name that is not Fleet's: FAILED / OWNERSHIP_CONFLICT", async () => {
      const { deployments, namespace } = await setup();
      const kc = new KubeConfig();
      kc.loadFromFile(sim.kubeconfigPath('charlie'));
      const core = kc.makeApiClient(CoreV1Api);
      await core
        .createNamespace({ body: { metadata: { name: namespace } } })
        .catch(() => undefined);
      const squatter = `squatter-${databaseId
        .toLowerCase()
        .replace(/_/g, '-')}`;
      await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
        namespace,
        body: {
          metadata: { name: squatter },
          spec: {
            selector: { matchLabels: { app: 'x' } },
            template: {
              metadata: { labels: { app: 'x' } },
              spec: { containers: [{ name: 'x', image: 'theirs:1' }] },
            },
          },
        },
      });
      const d = await deployments.deploy(
        {
          entityRef: `component:default/${squatter}`,
          cluster: 'charlie',
          image: 'nginx:1.27',
        },
        'test',
      );
      expect(d).toMatchObject({
        status: 'FAILED',
        statusReason: 'OWNERSHIP_CONFLICT',
      });
      expect(d.message).toContain(
        `Deployment ${namespace}/${squatter} is not Fleet's to change`,
      );
      expect(
        (liveObject('charlie', 'Deployment', squatter) as any).spec.template
          .spec.containers[0].image,
      ).toBe('theirs:1');
    });

    it('ends two concurrent deploys of the same component and cluster at the last revision, not stuck', async () => {
      const { stores, deployments } = await setup();
      const ref = `component:default/twice-${databaseId
        .toLowerCase()
        .replace(/_/g, '-')}`;
      const [first, second] = await Promise.all([
        deployments.deploy(
          { entityRef: ref, cluster: 'bravo', image: 'nginx:1.27' },
          'a',
        ),
        deployments.deploy(
          { entityRef: ref, cluster: 'bravo', image: 'nginx:1.27' },
          'b',
        ),
      ]);
      expect(first.id).toBe(second.id);
      const done = await settled(stores, first.id);
      expect(done.status).toBe('DEPLOYED');
      expect(done.revision).toBe(2);
    });

    it('writes DEGRADED / CLUSTER_OFFLINE, not DEPLOYED, when the cluster went OFFLINE during the rollout', async () => {
      const { stores, deployments } = await setup();
      // The cluster goes OFFLINE before the rollout is done, even on a busy machine.
      sim.setReadiness('alpha', { readyDelayMs: 3000 });
      const d = await deployments.deploy(
        {
          entityRef: 'component:default/caught-out',
          cluster: 'alpha',
          image: 'nginx:1.27',
        },
        'test',
      );
      await stores.clusters.inClusterTransaction(tx =>
        tx.updateClusterHealth('alpha', {
          status: 'OFFLINE',
          statusReason: 'FAILURE_THRESHOLD_REACHED',
          consecutiveFailures: 2,
          consecutiveSuccesses: 0,
        }),
      );
      expect(await settled(stores, d.id)).toMatchObject({
        status: 'DEGRADED',
        statusReason: 'CLUSTER_OFFLINE',
      });
    });

    it('fails a deployment left PENDING past the deadline, and follows one left PROGRESSING', async () => {
      const { stores, deployments } = await setup({ progressDeadlineMs: 200 });
      const app = await stores.applications.insertApplication({
        entityRef: 'component:default/orphan',
        name: 'orphan',
        spec: { image: 'x' },
      });
      const pending = await stores.deployments.insertDeployment(
        {
          applicationId: app.id,
          cluster: 'alpha',
          status: 'PENDING',
          firstRevision: { image: 'x', cause: 'deploy', createdBy: 'test' },
        },
        'test',
      );
      await new Promise(r => setTimeout(r, 300));
      await deployments.adoptUnfinished();
      expect(await stores.deployments.getDeployment(pending.id)).toMatchObject({
        status: 'FAILED',
        statusReason: 'APPLY_FAILED',
      });
    });
  },
);
