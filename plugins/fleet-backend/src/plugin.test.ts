import fs from 'node:fs';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
} from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import request from 'supertest';
import { schedulerServiceFactory } from '@backstage/backend-defaults/scheduler';
import { fleetPlugin } from './plugin';
import { createTestDatabases } from './testing/databases';
import { deployedApplication, waitUntil } from './testing/apiCalls';
import { KubeSimulator, useSimulator } from '@cnp/kube-simulator';
import path from 'node:path';
import { eventually } from './testing/eventually';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west', 'north'] });

function fleetConfig(extra: Record<string, unknown> = {}) {
  return {
    data: {
      fleet: {
        discovery: { kubeconfigDir: sim.kubeconfigDir },
        // Cycles back to back: the outage's time rule and the manual-run limit are off, except in
        // the tests about them.
        health: {
          probeTimeout: { seconds: 2 },
          minOutage: { seconds: 0 },
          manualMinInterval: { seconds: 0 },
        },
        deploy: { pollInterval: { milliseconds: 100 } },
        ...extra,
      },
    },
  };
}

const component = (name: string, annotations: Record<string, string>) => ({
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Component',
  metadata: { name, namespace: 'default', annotations },
  spec: { type: 'service', lifecycle: 'production', owner: 'team-a' },
});
const catalogEntities = [
  component('annotated', { 'cnp.io/image': 'ghcr.io/acme/annotated:2.0' }),
  component('badly-annotated', { 'cnp.io/image': 'not an image' }),
  component('plain', {}),
];

describe.each(databases.eachSupportedId())('fleet plugin (%s)', databaseId => {
  async function start(
    options: {
      knex?: Awaited<ReturnType<typeof databases.init>>;
      deny?: boolean;
      /** Backstage's own scheduler, running the tasks on their schedule, instead of the mock. */
      realScheduler?: boolean;
    } = {},
  ) {
    const knex = options.knex ?? (await databases.init(databaseId));
    const backend = await startTestBackend({
      features: [
        fleetPlugin,
        mockServices.database.factory({ knex }),
        mockServices.rootConfig.factory(fleetConfig()),
        options.realScheduler
          ? schedulerServiceFactory
          : mockServices.scheduler.factory(),
        catalogServiceMock.factory({ entities: catalogEntities }),
        ...(options.deny
          ? [mockServices.permissions.factory({ result: AuthorizeResult.DENY })]
          : []),
      ],
    });
    return { knex, backend, server: backend.server };
  }

  it('releases a new image to every placed cluster at once, skipping an OFFLINE one, and reports its progress', async () => {
    const { server } = await start();
    await request(server).post('/api/fleet/health/run').expect(200);
    const entityRef = `component:default/released-${databaseId.toLowerCase()}`;
    const ids: Record<string, string> = {};
    for (const cluster of ['east', 'west', 'north']) {
      const res = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster, image: 'released:1.0.0' })
        .expect(201);
      ids[cluster] = res.body.id;
    }
    const waitFor = async (check: () => Promise<boolean>) => {
      for (let i = 0; i < 300 && !(await check()); i++) {
        await new Promise(r => setTimeout(r, 50));
      }
      expect(await check()).toBe(true);
    };
    await waitFor(async () => {
      const list = await request(server)
        .get(`/api/fleet/deployments?entityRef=${entityRef}`)
        .expect(200);
      return list.body.items.every((d: any) => d.status === 'DEPLOYED');
    });
    const [application] = (
      await request(server)
        .get(`/api/fleet/applications?entityRef=${entityRef}`)
        .expect(200)
    ).body.items;

    await request(server)
      .post(`/api/fleet/applications/${application.id}/releases`)
      .send({ image: 'released:2.0.0', strategy: { waves: [] } })
      .expect(400);
    sim.setFault('north', { mode: 'down' });
    await request(server).post('/api/fleet/health/run').expect(200);
    await request(server).post('/api/fleet/health/run').expect(200);

    const created = await request(server)
      .post(`/api/fleet/applications/${application.id}/releases`)
      .send({ image: 'released:2.0.0' })
      .expect(201);
    expect(created.body).toMatchObject({
      applicationId: application.id,
      entityRef,
      image: 'released:2.0.0',
      skipped: [{ cluster: 'north', reason: 'cluster is OFFLINE' }],
    });
    expect(
      created.body.targets.map((t: any) => [t.cluster, t.revision]).sort(),
    ).toEqual([
      ['east', 2],
      ['west', 2],
    ]);
    await waitFor(async () => {
      const release = await request(server)
        .get(`/api/fleet/releases/${created.body.id}`)
        .expect(200);
      return release.body.status === 'COMPLETED';
    });
    const listed = await request(server)
      .get(`/api/fleet/applications/${application.id}/releases`)
      .expect(200);
    expect(listed.body.items.map((r: any) => r.id)).toEqual([created.body.id]);
    expect(listed.body.items[0].targets.map((t: any) => t.outcome)).toEqual([
      'DEPLOYED',
      'DEPLOYED',
    ]);
    const revisions = await request(server)
      .get(`/api/fleet/deployments/${ids.east}/revisions`)
      .expect(200);
    expect(revisions.body.items[0]).toMatchObject({
      revision: 2,
      image: 'released:2.0.0',
      cause: 'release',
    });
    const fleetView = await request(server)
      .get(`/api/fleet/applications/${application.id}/status`)
      .expect(200);
    expect(fleetView.body.summary).toContain('2.0.0 on 2 clusters, 1.0.0 on 1');
    // The OFFLINE cluster was left as it was.
    const north = await request(server)
      .get(`/api/fleet/deployments/${ids.north}`)
      .expect(200);
    expect(north.body).toMatchObject({ revision: 1, image: 'released:1.0.0' });
    await request(server)
      .get('/api/fleet/releases/00000000-0000-4000-8000-000000000000')
      .expect(404);
    // A bad cluster name changes nothing, not even the clusters named before it.
    await request(server)
      .post(`/api/fleet/applications/${application.id}/releases`)
      .send({ image: 'released:3.0.0', clusters: ['east', 'nowhere'] })
      .expect(400);
    const eastNow = await request(server)
      .get(`/api/fleet/deployments/${ids.east}`)
      .expect(200);
    expect(eastNow.body).toMatchObject({
      revision: 2,
      image: 'released:2.0.0',
    });
  });

  it('runs a release with a strategy through the API and its scheduled task: 400 naming the field, promote, pause, resume, 409s', async () => {
    const { server } = await start({ realScheduler: true });
    const entityRef = `component:default/canaried-${databaseId.toLowerCase()}`;
    const application = await deployedApplication(server, {
      entityRef,
      image: 'canaried:1.0.0',
      clusters: ['east', 'west'],
      replicas: 2,
    });
    const releases = `/api/fleet/applications/${application.id}/releases`;
    const strategy = {
      waves: [{ clusters: ['east'] }, { clusters: ['west'] }],
      canary: { steps: [{ setWeight: 50 }, { pause: {} }, { setWeight: 100 }] },
    };

    // A strategy that cannot run is a 400 naming the field, and nothing is stored or applied.
    const bad = await request(server)
      .post(releases)
      .send({
        image: 'canaried:2.0.0',
        strategy: {
          ...strategy,
          canary: { steps: [{ setWeight: 50 }, { setWeight: 20 }] },
        },
      })
      .expect(400);
    expect(bad.body.error.message).toContain(
      'strategy.canary.steps.1.setWeight: weights must increase',
    );
    const wavesBad = await request(server)
      .post(releases)
      .send({
        image: 'canaried:2.0.0',
        strategy: {
          ...strategy,
          waves: [{ clusterSelector: { env: 'nowhere' } }],
        },
      })
      .expect(400);
    expect(wavesBad.body.error.message).toContain(
      'strategy.waves.0 selects no cluster',
    );
    expect(
      (await request(server).get(releases).expect(200)).body.items,
    ).toEqual([]);

    const created = await request(server)
      .post(releases)
      .send({ image: 'canaried:2.0.0', strategy })
      .expect(201);
    expect(created.body).toMatchObject({
      status: 'PROGRESSING',
      targets: [],
      strategy,
    });
    expect(created.body.progress.waves).toEqual([['east'], ['west']]);
    const id = created.body.id;
    // One release with a strategy at a time per application.
    await request(server)
      .post(releases)
      .send({ image: 'canaried:3.0.0', strategy })
      .expect(409);
    await request(server)
      .post('/api/fleet/releases/00000000-0000-4000-8000-000000000000/promote')
      .expect(404);

    const read = async () =>
      (await request(server).get(`/api/fleet/releases/${id}`).expect(200)).body;
    const atPause = await waitUntil(
      read,
      r => r.progress.clusters[0].awaitingPromote === true,
    );
    expect(atPause.progress.clusters[0]).toMatchObject({
      cluster: 'east',
      state: 'RUNNING',
      weight: 50,
      stepIndex: 1,
    });
    expect(atPause.progress.clusters[1]).toMatchObject({
      cluster: 'west',
      state: 'WAITING',
    });

    await request(server).post(`/api/fleet/releases/${id}/resume`).expect(409);
    expect(
      (
        await request(server)
          .post(`/api/fleet/releases/${id}/pause`)
          .expect(200)
      ).body.status,
    ).toBe('PAUSED');
    const promoteWhilePaused = await request(server)
      .post(`/api/fleet/releases/${id}/promote`)
      .expect(409);
    expect(promoteWhilePaused.body.error.message).toBe(
      'The release is PAUSED: resume it before promoting',
    );
    await request(server).post(`/api/fleet/releases/${id}/resume`).expect(200);
    await request(server).post(`/api/fleet/releases/${id}/promote`).expect(200);
    const westPaused = await waitUntil(
      read,
      r => r.progress.clusters[1].awaitingPromote === true,
    );
    expect(westPaused.progress.clusters[0]).toMatchObject({
      state: 'DONE',
      weight: 100,
    });
    await request(server).post(`/api/fleet/releases/${id}/promote`).expect(200);
    const done = await waitUntil(read, r => r.status === 'COMPLETED');
    expect(done.targets.map((t: any) => [t.cluster, t.revision])).toEqual([
      ['east', 2],
      ['west', 2],
    ]);
    const finished = await request(server)
      .post(`/api/fleet/releases/${id}/abort`)
      .expect(409);
    expect(finished.body.error.message).toBe(
      'The release is COMPLETED: there is nothing to abort',
    );
    const deployments = (
      await request(server).get(`/api/fleet/deployments?entityRef=${entityRef}`)
    ).body.items;
    expect(deployments.map((d: any) => d.image)).toEqual([
      'canaried:2.0.0',
      'canaried:2.0.0',
    ]);
    // A release without a strategy has nothing to steer.
    const plain = await request(server)
      .post(releases)
      .send({ image: 'canaried:2.0.1' })
      .expect(201);
    await request(server)
      .post(`/api/fleet/releases/${plain.body.id}/pause`)
      .expect(409);
  });

  it('lists discovered clusters, runs health cycles on demand and reports the summary', async () => {
    const { server } = await start();
    const before = await request(server).get('/api/fleet/clusters').expect(200);
    expect(before.body.items.map((c: any) => [c.name, c.status])).toEqual([
      ['east', 'UNKNOWN'],
      ['north', 'UNKNOWN'],
      ['west', 'UNKNOWN'],
    ]);
    const cycle = await request(server)
      .post('/api/fleet/health/run')
      .expect(200);
    expect(cycle.body).toMatchObject({ probed: 3, online: 3 });

    sim.setFault('west', { mode: 'down' });
    await request(server).post('/api/fleet/health/run').expect(200);
    await request(server).post('/api/fleet/health/run').expect(200);
    const offline = await request(server)
      .get('/api/fleet/clusters?status=OFFLINE')
      .expect(200);
    expect(offline.body.items.map((c: any) => c.name)).toEqual(['west']);
    const west = await request(server)
      .get('/api/fleet/clusters/west')
      .expect(200);
    expect(west.body).toMatchObject({
      name: 'west',
      status: 'OFFLINE',
      consecutiveFailures: 2,
      source: 'discovered',
    });
    const events = await request(server)
      .get('/api/fleet/clusters/west/events')
      .expect(200);
    expect(events.body.items[0]).toMatchObject({
      from: 'ONLINE',
      to: 'OFFLINE',
      reason: 'FAILURE_THRESHOLD_REACHED',
    });
    expect(events.body.items[0].message).toMatch(
      /2\/2 consecutive probes failed/,
    );

    const summary = await request(server).get('/api/fleet/summary').expect(200);
    expect(summary.body).toMatchObject({
      clusters: { total: 3, ONLINE: 2, OFFLINE: 1, UNKNOWN: 0 },
      deployments: { total: 0 },
      massOutage: { active: false },
    });
    expect(summary.body.lastCycleAt).toEqual(expect.any(String));

    sim.setFault('west', { mode: 'ok' });
    await request(server).post('/api/fleet/health/run').expect(200);
    expect(
      (await request(server).get('/api/fleet/clusters/west')).body.status,
    ).toBe('ONLINE');

    const recent = await request(server)
      .get('/api/fleet/events?limit=2')
      .expect(200);
    expect(
      recent.body.items.map((e: any) => `${e.subject} ${e.from}->${e.to}`),
    ).toEqual(['west OFFLINE->ONLINE', 'west ONLINE->OFFLINE']);
    await request(server).get('/api/fleet/events?limit=0').expect(400);
    await request(server).get('/api/fleet/events?limit=abc').expect(400);

    const all = JSON.stringify(
      (await request(server).get('/api/fleet/clusters')).body,
    );
    expect(all).not.toContain(sim.token('east'));
    expect(all).not.toContain('BEGIN CERTIFICATE');
  });

  it('keeps failure counts across a backend restart', async () => {
    const first = await start();
    await request(first.server).post('/api/fleet/health/run').expect(200);
    sim.setFault('north', { mode: 'down' });
    await request(first.server).post('/api/fleet/health/run').expect(200);
    expect(
      (await request(first.server).get('/api/fleet/clusters/north')).body,
    ).toMatchObject({
      status: 'ONLINE',
      consecutiveFailures: 1,
    });
    await first.backend.stop();

    const second = await start({ knex: first.knex });
    expect(
      (await request(second.server).get('/api/fleet/clusters/north')).body,
    ).toMatchObject({
      status: 'ONLINE',
      consecutiveFailures: 1,
    });
    await request(second.server).post('/api/fleet/health/run').expect(200);
    expect(
      (await request(second.server).get('/api/fleet/clusters/north')).body,
    ).toMatchObject({
      status: 'OFFLINE',
      consecutiveFailures: 2,
    });
  });

  it("refuses a manual registration of a discovered cluster's API server under a new name and labels: 409 naming the cluster, nothing stored", async () => {
    const { server } = await start();
    const res = await request(server)
      .post('/api/fleet/clusters')
      .send({
        name: 'north-too',
        endpoint: sim.endpoint('north'),
        kubeconfigRef: sim.kubeconfigPath('north'),
        labels: { env: 'staging' },
      })
      .expect(409);
    expect(res.body.error).toMatchObject({
      name: 'ConflictError',
      message: expect.stringContaining(
        "is already registered as cluster 'north'",
      ),
    });
    // The same server spelled otherwise, or with a reference Fleet cannot read, is still it.
    for (const [endpoint, kubeconfigRef] of [
      [`${sim.endpoint('north')}/`, sim.kubeconfigPath('north')],
      [sim.endpoint('north'), 'vault:north'],
    ]) {
      const again = await request(server)
        .post('/api/fleet/clusters')
        .send({ name: 'north-too', endpoint, kubeconfigRef })
        .expect(409);
      expect(again.body.error.message).toContain("cluster 'north'");
    }
    await request(server).get('/api/fleet/clusters/north-too').expect(404);
    expect(
      (await request(server).get('/api/fleet/clusters/north')).body,
    ).toMatchObject({ labels: {}, source: 'discovered' });
  });

  it('deletes a cluster once its deployments are undeployed: 409 naming them before, 204 after', async () => {
    const { server } = await start();
    // An API server of its own (one cluster is one API server), its kubeconfig in an allowed
    // directory that discovery does not read (a subdirectory of the discovery directory).
    const own = await KubeSimulator.start({
      clusters: ['solo'],
      outDir: path.join(
        sim.kubeconfigDir,
        `manual-${databaseId.toLowerCase()}`,
      ),
    });
    try {
      await request(server)
        .post('/api/fleet/clusters')
        .send({
          name: 'manual-north',
          endpoint: own.endpoint('solo'),
          kubeconfigRef: own.kubeconfigPath('solo'),
        })
        .expect(201);
      await request(server).post('/api/fleet/health/run').expect(200);
      const entityRef = `component:default/moving-${databaseId.toLowerCase()}`;
      const deployed = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'manual-north', image: 'moving:1.0.0' })
        .expect(201);
      const id = deployed.body.id;
      await eventually(async () =>
        expect(
          (
            await request(server).get(`/api/fleet/deployments/${id}`)
          ).body.status,
        ).toBe('DEPLOYED'),
      );
      const refused = await request(server)
        .delete('/api/fleet/clusters/manual-north')
        .expect(409);
      expect(refused.body.error.message).toContain(`${entityRef} (${id})`);
      const removing = await request(server)
        .delete(`/api/fleet/deployments/${id}`)
        .expect(202);
      expect(removing.body.status).toBe('REMOVING');
      await eventually(() =>
        request(server).get(`/api/fleet/deployments/${id}`).expect(404),
      );
      await request(server)
        .delete('/api/fleet/clusters/manual-north')
        .expect(204);
    } finally {
      await own.stop();
    }
  });

  it('refuses a cluster endpoint that carries Markdown, HTML, whitespace or credentials, and stores nothing (catalog injection)', async () => {
    const { server } = await start();
    const cases: Array<[string, string]> = [
      [
        'https://a.example/ [Reset your password](https://evil.example)',
        'must not contain whitespace',
      ],
      ['https://a.example/[x](https://evil.example)', 'must be a plain URL'],
      ['https://a.example/<img src=x onerror=alert(1)>', 'must be a plain URL'],
      ['https://admin:hunter2@a.example:6443', 'must not contain credentials'],
      ['https://a.example/\n# Urgent', 'must not contain'],
    ];
    for (const [endpoint, message] of cases) {
      const res = await request(server)
        .post('/api/fleet/clusters')
        .send({ name: 'injected', endpoint, kubeconfigRef: 'vault:x' })
        .expect(400);
      expect(res.body.error.message).toContain(message);
    }
    await request(server).get('/api/fleet/clusters/injected').expect(404);
    // IPv6 hosts keep their brackets.
    await request(server)
      .post('/api/fleet/clusters')
      .send({
        name: 'ipv6',
        endpoint: 'https://[fd00::1]:6443',
        kubeconfigRef: 'vault:x',
      })
      .expect(201);
  });

  it('applies environment variables from a Secret or ConfigMap key as references (never values), and refuses a malformed reference', async () => {
    const { server } = await start();
    await request(server).post('/api/fleet/health/run').expect(200);
    const appName = `env-ref-${databaseId.toLowerCase().replace(/_/g, '-')}`;
    const entityRef = `component:default/${appName}`;
    // The built-in project's Secrets and ConfigMaps are those named after the application.
    const db = `${appName}-db`;
    const site = `${appName}-site`;
    const bad = await request(server)
      .post('/api/fleet/applications')
      .send({
        entityRef,
        spec: {
          image: 'env-ref:1.0.0',
          env: {
            DB: {
              valueFrom: { secretKeyRef: { name: 'Not A Name', key: 'p' } },
            },
          },
        },
      })
      .expect(400);
    expect(bad.body.error.message).toContain(
      'must be a Secret or ConfigMap name',
    );
    await request(server)
      .post('/api/fleet/applications')
      .send({
        entityRef,
        spec: {
          image: 'env-ref:1.0.0',
          env: {
            LOG_LEVEL: 'info',
            DB_PASSWORD: {
              valueFrom: { secretKeyRef: { name: db, key: 'password' } },
            },
            REGION: {
              valueFrom: {
                configMapKeyRef: {
                  name: site,
                  key: 'region',
                  optional: true,
                },
              },
            },
          },
        },
      })
      .expect(201);
    const deployed = await request(server)
      .post('/api/fleet/deployments')
      .send({ entityRef, cluster: 'east' })
      .expect(201);
    expect(deployed.body.status).not.toBe('FAILED');
    const live = sim
      .objects('east')
      .find(
        o =>
          o.kind === 'Deployment' &&
          (o.metadata as any).annotations?.['cnp.io/entity-ref'] === entityRef,
      ) as any;
    expect(live.spec.template.spec.containers[0].env).toEqual([
      {
        name: 'DB_PASSWORD',
        valueFrom: { secretKeyRef: { name: db, key: 'password' } },
      },
      { name: 'LOG_LEVEL', value: 'info' },
      {
        name: 'REGION',
        valueFrom: {
          configMapKeyRef: { name: site, key: 'region', optional: true },
        },
      },
    ]);
  });

  it('registers, updates and deletes manual clusters, answering 400/404/409 with clear messages', async () => {
    const { server } = await start();
    const created = await request(server)
      .post('/api/fleet/clusters')
      .send({
        name: 'manual-1',
        endpoint: 'https://10.0.0.1:6443',
        kubeconfigRef: 'vault:prod',
        labels: { env: 'prod' },
      })
      .expect(201);
    expect(created.body).toMatchObject({
      name: 'manual-1',
      status: 'UNKNOWN',
      source: 'manual',
      labels: { env: 'prod' },
    });

    const dup = await request(server)
      .post('/api/fleet/clusters')
      .send({
        name: 'manual-1',
        endpoint: 'https://10.0.0.2:6443',
        kubeconfigRef: 'x',
      })
      .expect(409);
    expect(dup.body.error).toMatchObject({
      name: 'ConflictError',
      message: "Cluster 'manual-1' already exists",
    });
    const dupDiscovered = await request(server)
      .post('/api/fleet/clusters')
      .send({
        name: 'east',
        endpoint: 'https://10.0.0.2:6443',
        kubeconfigRef: 'x',
      })
      .expect(409);
    expect(dupDiscovered.body.error.name).toBe('ConflictError');

    const badName = await request(server)
      .post('/api/fleet/clusters')
      .send({
        name: 'Bad_Name!',
        endpoint: 'https://10.0.0.1:6443',
        kubeconfigRef: 'x',
      })
      .expect(400);
    expect(badName.body.error.name).toBe('InputError');
    expect(badName.body.error.message).toMatch(
      /name: must be a DNS-1123 label/,
    );
    const badEndpoint = await request(server)
      .post('/api/fleet/clusters')
      .send({ name: 'ok-name', endpoint: 'not a url', kubeconfigRef: 'x' })
      .expect(400);
    expect(badEndpoint.body.error.message).toMatch(
      /endpoint: must be an http\(s\) URL/,
    );
    await request(server)
      .post('/api/fleet/clusters')
      .send({ name: 'x' })
      .expect(400);
    await request(server)
      .post('/api/fleet/clusters')
      .set('Content-Type', 'application/json')
      .send('{"name":')
      .expect(400);
    await request(server)
      .post('/api/fleet/clusters')
      .send({
        name: 'a'.repeat(64),
        endpoint: 'https://10.0.0.1',
        kubeconfigRef: 'x',
      })
      .expect(400);
    await request(server)
      .post('/api/fleet/clusters')
      .send({
        name: 'extra',
        endpoint: 'https://10.0.0.1',
        kubeconfigRef: 'x',
        kubeconfig: 'apiVersion: v1',
      })
      .expect(400);

    await request(server).get('/api/fleet/clusters?status=BROKEN').expect(400);
    await request(server).get('/api/fleet/clusters/nope').expect(404);
    await request(server).get('/api/fleet/clusters/nope/events').expect(404);
    // A name no cluster can have is not found either, on every route that names one.
    await request(server).get('/api/fleet/clusters/Not_Valid').expect(404);
    await request(server)
      .patch('/api/fleet/clusters/Not_Valid')
      .send({ labels: {} })
      .expect(404);
    await request(server).delete('/api/fleet/clusters/Not_Valid').expect(404);
    await request(server)
      .get('/api/fleet/clusters/Not_Valid/events')
      .expect(404);

    const patched = await request(server)
      .patch('/api/fleet/clusters/manual-1')
      .send({ labels: { env: 'staging' }, failureThreshold: 4 })
      .expect(200);
    expect(patched.body).toMatchObject({
      labels: { env: 'staging' },
      failureThreshold: 4,
    });
    await request(server)
      .patch('/api/fleet/clusters/manual-1')
      .send({ failureThreshold: 0 })
      .expect(400);
    await request(server)
      .patch('/api/fleet/clusters/manual-1')
      .send({})
      .expect(400);
    await request(server)
      .patch('/api/fleet/clusters/nope')
      .send({ labels: {} })
      .expect(404);

    await request(server).delete('/api/fleet/clusters/east').expect(409);
    // once its kubeconfig no longer names it, a discovered cluster can be removed
    const gone = `gone-${databaseId.toLowerCase().replace(/_/g, '-')}`;
    const goneFile = await sim.addCluster(gone);
    await request(server).post('/api/fleet/health/run').expect(200);
    await request(server).delete(`/api/fleet/clusters/${gone}`).expect(409);
    fs.rmSync(goneFile);
    await request(server).delete(`/api/fleet/clusters/${gone}`).expect(204);
    await request(server).delete('/api/fleet/clusters/manual-1').expect(204);
    await request(server).delete('/api/fleet/clusters/manual-1').expect(404);
  });

  it('deploys through the API: 201 with the flow status, 409 for OFFLINE, 404/400 for bad input, events listed', async () => {
    const { server } = await start();
    await request(server).post('/api/fleet/health/run').expect(200);

    const created = await request(server)
      .post('/api/fleet/deployments')
      .send({
        entityRef: 'component:default/payments',
        cluster: 'east',
        image: 'ghcr.io/acme/payments:1.0',
        replicas: 2,
      })
      .expect(201);
    expect(created.body).toMatchObject({
      entityRef: 'component:default/payments',
      cluster: 'east',
      clusterStatus: 'ONLINE',
      status: 'PROGRESSING',
    });
    const deployment = await eventually(async () => {
      const d = (
        await request(server)
          .get('/api/fleet/deployments?entityRef=component:default/payments')
          .expect(200)
      ).body.items[0];
      expect(d.status).not.toBe('PROGRESSING');
      return d;
    });
    expect(deployment.status).toBe('DEPLOYED');
    const events = await request(server)
      .get(`/api/fleet/deployments/${deployment.id}/events`)
      .expect(200);
    expect(events.body.items.map((e: any) => e.to)).toEqual([
      'DEPLOYED',
      'PROGRESSING',
      'PENDING',
    ]);
    expect(
      sim
        .objects('east')
        .some(
          o =>
            o.kind === 'Deployment' && (o.metadata as any).name === 'payments',
        ),
    ).toBe(true);

    const apps = await request(server)
      .get('/api/fleet/applications?entityRef=component:default/payments')
      .expect(200);
    expect(apps.body.items).toEqual([
      expect.objectContaining({
        origin: 'imported',
        name: 'payments',
        spec: { image: 'ghcr.io/acme/payments:1.0', replicas: 2 },
      }),
    ]);
    expect(
      (
        await request(server)
          .get('/api/fleet/deployments?cluster=west')
          .expect(200)
      ).body.items,
    ).toEqual([]);

    sim.setFault('west', { mode: 'down' });
    await request(server).post('/api/fleet/health/run').expect(200);
    await request(server).post('/api/fleet/health/run').expect(200);
    // Background work (a rollout poll, a coalesced health run) may still read west; what must
    // not happen is a write from the refused deploy.
    const westWrites = sim.history('west').length;
    const refused = await request(server)
      .post('/api/fleet/deployments')
      .send({ entityRef: 'component:default/payments', cluster: 'west' })
      .expect(409);
    expect(refused.body.error.message).toMatch(/Cluster 'west' is OFFLINE/);
    expect(sim.history('west')).toHaveLength(westWrites);
    const moved = await request(server)
      .patch(`/api/fleet/applications/${apps.body.items[0].id}`)
      .send({ placement: { clusters: ['west'] } })
      .expect(409);
    expect(moved.body.error.name).toBe('ConflictError');

    await request(server)
      .post('/api/fleet/deployments')
      .send({ entityRef: 'component:default/payments', cluster: 'nope' })
      .expect(404);
    await request(server)
      .post('/api/fleet/deployments')
      .send({ entityRef: 'component:default/payments', cluster: 'Bad!' })
      .expect(400);
    await request(server)
      .post('/api/fleet/deployments')
      .send({ entityRef: 'component:default/new-one', cluster: 'east' })
      .expect(400);
    await request(server)
      .post('/api/fleet/deployments')
      .send({
        entityRef: 'component:default/x',
        cluster: 'east',
        image: 'has space',
      })
      .expect(400);
    await request(server)
      .post('/api/fleet/deployments')
      .send({
        entityRef: 'component:default/x',
        cluster: 'east',
        image: 'x',
        replicas: -1,
      })
      .expect(400);
    await request(server)
      .post('/api/fleet/deployments')
      .send({
        entityRef: 'component:ns/name/extra',
        cluster: 'east',
        image: 'x',
      })
      .expect(400);
    const wrongKind = await request(server)
      .post('/api/fleet/deployments')
      .send({ entityRef: 'user:default/ada', cluster: 'east', image: 'x' })
      .expect(400);
    expect(wrongKind.body.error.message).toMatch(/Fleet deploys components/);
    const malformed = await request(server)
      .get('/api/fleet/deployments/not-an-id/events')
      .expect(404); // no deployment can have that id
    expect(malformed.body.error).toMatchObject({
      name: 'NotFoundError',
      message: "Deployment 'not-an-id' not found",
    });
    await request(server)
      .get('/api/fleet/deployments/00000000-0000-4000-8000-000000000000/events')
      .expect(404);

    const registered = await request(server)
      .post('/api/fleet/applications')
      .send({
        entityRef: 'component:default/scaffolded-app',
        origin: 'scaffolded',
        spec: { image: 'nginx:1.27', port: 8080 },
      })
      .expect(201);
    expect(registered.body).toMatchObject({
      origin: 'scaffolded',
      name: 'scaffolded-app',
    });
    await request(server)
      .post('/api/fleet/applications')
      .send({ entityRef: 'component:default/scaffolded-app', spec: {} })
      .expect(409);
    await request(server)
      .post('/api/fleet/applications')
      .send({ entityRef: 'component:default/y', spec: { replicas: 'three' } })
      .expect(400);
    await request(server)
      .post('/api/fleet/applications')
      .send({ entityRef: 'component:default/y', origin: 'stolen', spec: {} })
      .expect(400);
    await request(server)
      .patch(`/api/fleet/applications/${registered.body.id}`)
      .send({ spec: { replicas: 4 } })
      .expect(200);
    await request(server)
      .patch('/api/fleet/applications/00000000-0000-4000-8000-000000000000')
      .send({ spec: { replicas: 4 } })
      .expect(404);
    const summary = await request(server).get('/api/fleet/summary').expect(200);
    expect(summary.body.deployments).toMatchObject({
      total: 1,
      byStatus: { DEPLOYED: 1 },
      bySyncStatus: { SYNCED: 1 },
    });
    // The same count per cluster, for the fleet map: only clusters with a deployment.
    const perCluster = await request(server)
      .get('/api/fleet/deployment-counts')
      .expect(200);
    expect(perCluster.body.items).toEqual([
      {
        cluster: 'east',
        total: 1,
        byStatus: {
          PENDING: 0,
          PROGRESSING: 0,
          DEPLOYED: 1,
          DEGRADED: 0,
          FAILED: 0,
          REMOVING: 0,
        },
      },
    ]);
  });

  it('PATCH /applications/:id with a stale If-Match is refused with 412 and changes nothing; with the current ETag it writes', async () => {
    const { server } = await start();
    const registered = await request(server)
      .post('/api/fleet/applications')
      .send({
        entityRef: 'component:default/etag-app',
        spec: { image: 'nginx:1.27', replicas: 1 },
      })
      .expect(201);
    const url = `/api/fleet/applications/${registered.body.id}`;
    const read = await request(server).get(url).expect(200);
    expect(read.headers.etag).toBe('"1"');
    expect(read.body).toMatchObject({ version: 1, spec: { replicas: 1 } });

    // Another writer changes it after this client read it.
    const other = await request(server)
      .patch(url)
      .set('If-Match', read.headers.etag)
      .send({ spec: { replicas: 2 } })
      .expect(200);
    expect(other.headers.etag).toBe('"2"');

    const stale = await request(server)
      .patch(url)
      .set('If-Match', read.headers.etag)
      .send({ spec: { replicas: 5 } })
      .expect(412);
    expect(stale.body.error).toMatchObject({
      name: 'PreconditionFailedError',
      message: expect.stringContaining('version 2'),
    });
    await request(server)
      .patch(url)
      .set('If-Match', 'W/"2"')
      .send({ spec: { replicas: 5 } })
      .expect(412);
    const unchanged = await request(server).get(url).expect(200);
    expect(unchanged.headers.etag).toBe('"2"');
    expect(unchanged.body).toMatchObject({ version: 2, spec: { replicas: 2 } });

    const current = await request(server)
      .patch(url)
      .set('If-Match', unchanged.headers.etag)
      .send({ spec: { replicas: 5 } })
      .expect(200);
    expect(current.headers.etag).toBe('"3"');
    expect(current.body).toMatchObject({
      version: 3,
      spec: { image: 'nginx:1.27', replicas: 5 },
    });
    // Without If-Match a PATCH writes over whatever version is there.
    await request(server)
      .patch(url)
      .send({ spec: { replicas: 6 } })
      .expect(200);
    await request(server)
      .get('/api/fleet/applications/00000000-0000-4000-8000-000000000000')
      .expect(404);
  });

  it('sends every field of clusters, applications and deployments, null when unset (origin: null, lastProbeAt: null…)', async () => {
    const { server } = await start();
    const before = await request(server)
      .get('/api/fleet/clusters/east')
      .expect(200);
    expect(before.body).toMatchObject({
      status: 'UNKNOWN',
      statusReason: 'NEVER_PROBED',
      lastProbeAt: null,
      lastSuccessAt: null,
      lastTransitionAt: null,
      probeLatencyMs: null,
      serverVersion: null,
      failureThreshold: null,
    });
    expect(before.body).not.toHaveProperty('cascadeHeldAt');
    const summary = await request(server).get('/api/fleet/summary').expect(200);
    expect(summary.body.lastCycleAt).toBeNull();

    const app = await request(server)
      .post('/api/fleet/applications')
      .send({
        entityRef: 'component:default/no-origin',
        spec: { image: 'x:1' },
      })
      .expect(201);
    expect(app.body.origin).toBeNull();
    const listed = await request(server)
      .get('/api/fleet/applications?entityRef=component:default/no-origin')
      .expect(200);
    expect(listed.body.items[0].origin).toBeNull();

    await request(server).post('/api/fleet/health/run').expect(200);
    const after = await request(server)
      .get('/api/fleet/clusters/east')
      .expect(200);
    expect(after.body.lastProbeAt).toEqual(expect.any(String));
    const events = await request(server)
      .get('/api/fleet/clusters/east/events')
      .expect(200);
    expect(events.body.items[0]).toMatchObject({
      from: 'UNKNOWN',
      to: 'ONLINE',
    });
    expect(events.body.items[0]).toHaveProperty('reason');
    expect(events.body.items[0]).toHaveProperty('message');
  });

  it('gzips small JSON answers itself, with ETags and 304s that carry no Content-Encoding', async () => {
    const { server } = await start();
    await request(server).post('/api/fleet/health/run').expect(200);
    const plain = await request(server)
      .get('/api/fleet/clusters')
      .set('Accept-Encoding', 'identity')
      .expect(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(plain.headers['content-length'])).toBeGreaterThan(1024);

    const gzipped = await request(server)
      .get('/api/fleet/clusters')
      .set('Accept-Encoding', 'gzip, deflate, br')
      .expect(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toMatch(/Accept-Encoding/);
    expect(gzipped.body).toEqual(plain.body); // supertest inflates it
    expect(Number(gzipped.headers['content-length'])).toBeLessThan(
      Number(plain.headers['content-length']),
    );

    const revalidated = await request(server)
      .get('/api/fleet/clusters')
      .set('Accept-Encoding', 'gzip')
      .set('If-None-Match', gzipped.headers.etag)
      .expect(304);
    expect(revalidated.headers['content-encoding']).toBeUndefined();
    await request(server)
      .get('/api/fleet/clusters')
      .set('Accept-Encoding', 'identity')
      .set('If-None-Match', plain.headers.etag)
      .expect(304);
    // A change of the answer changes the ETag: no stale 304.
    await request(server)
      .patch('/api/fleet/clusters/east')
      .send({ labels: { env: 'prod' } })
      .expect(200);
    await request(server)
      .get('/api/fleet/clusters')
      .set('Accept-Encoding', 'gzip')
      .set('If-None-Match', gzipped.headers.etag)
      .expect(200);
  });

  it("takes a placement selector as a map or as text such as 'env=prod'", async () => {
    const { server } = await start();
    const text = await request(server)
      .post('/api/fleet/applications')
      .send({
        entityRef: 'component:default/selected',
        spec: { image: 'x:1' },
        placement: { clusterSelector: 'env=prod, tier=web' },
      })
      .expect(201);
    expect(text.body.placement).toEqual({
      clusterSelector: { env: 'prod', tier: 'web' },
    });
    const map = await request(server)
      .patch(`/api/fleet/applications/${text.body.id}`)
      .send({ placement: { clusterSelector: { env: 'staging' } } })
      .expect(200);
    expect(map.body.placement).toEqual({ clusterSelector: { env: 'staging' } });
    const setBased = await request(server)
      .patch(`/api/fleet/applications/${text.body.id}`)
      .send({
        placement: { clusterSelector: 'env in (prod,staging), !canary' },
      })
      .expect(200);
    expect(setBased.body.placement).toEqual({
      clusterSelector: {
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['prod', 'staging'] },
          { key: 'canary', operator: 'DoesNotExist' },
        ],
      },
    });
    const bad = await request(server)
      .patch(`/api/fleet/applications/${text.body.id}`)
      .send({ placement: { clusterSelector: 'env in prod' } })
      .expect(400);
    expect(bad.body.error.message).toContain(
      "placement.clusterSelector: must be a label map or a selector such as 'env=prod,tier=web'",
    );
    const badOperator = await request(server)
      .patch(`/api/fleet/applications/${text.body.id}`)
      .send({
        placement: {
          clusterSelector: {
            matchExpressions: [{ key: 'env', operator: 'In' }],
          },
        },
      })
      .expect(400);
    expect(badOperator.body.error.message).toContain(
      'In and NotIn need values',
    );
  });

  it("deploys the entity's cnp.io/image when the request and the application name none", async () => {
    const { server } = await start();
    await request(server).post('/api/fleet/health/run').expect(200);

    const created = await request(server)
      .post('/api/fleet/deployments')
      .send({ entityRef: 'component:default/annotated', cluster: 'east' })
      .expect(201);
    expect(created.body).toMatchObject({
      entityRef: 'component:default/annotated',
      image: 'ghcr.io/acme/annotated:2.0',
    });
    const apps = await request(server)
      .get('/api/fleet/applications?entityRef=component:default/annotated')
      .expect(200);
    expect(apps.body.items).toMatchObject([
      { origin: 'imported', spec: { image: 'ghcr.io/acme/annotated:2.0' } },
    ]);

    const bad = await request(server)
      .post('/api/fleet/deployments')
      .send({ entityRef: 'component:default/badly-annotated', cluster: 'east' })
      .expect(400);
    expect(bad.body.error.message).toBe(
      "The cnp.io/image annotation of 'component:default/badly-annotated' is not a usable image: an image reference has no spaces, e.g. ghcr.io/acme/payments:1.4.2",
    );
    for (const entityRef of [
      'component:default/plain',
      'component:default/not-in-catalog',
    ]) {
      const none = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'east' })
        .expect(400);
      expect(none.body.error.message).toContain(
        'or annotate the entity with cnp.io/image',
      );
    }
    // An image in the request still wins over the annotation.
    const explicit = await request(server)
      .post('/api/fleet/deployments')
      .send({
        entityRef: 'component:default/badly-annotated',
        cluster: 'east',
        image: 'ghcr.io/acme/explicit:1.0',
      })
      .expect(201);
    expect(explicit.body.image).toBe('ghcr.io/acme/explicit:1.0');
  });

  it('needs credentials, except for liveness, and checks permissions on writes', async () => {
    const { server } = await start({ deny: true });
    await request(server)
      .get('/api/fleet/health')
      .set('Authorization', mockCredentials.none.header())
      .expect(200, { status: 'ok' });
    await request(server)
      .get('/api/fleet/clusters')
      .set('Authorization', mockCredentials.none.header())
      .expect(401);
    await request(server)
      .get('/api/fleet/summary')
      .set('Authorization', mockCredentials.none.header())
      .expect(401);
    await request(server).get('/api/fleet/clusters').expect(200);
    await request(server).post('/api/fleet/health/run').expect(403);
    await request(server)
      .post('/api/fleet/clusters')
      .send({
        name: 'manual-1',
        endpoint: 'https://10.0.0.1:6443',
        kubeconfigRef: 'x',
      })
      .expect(403);
    await request(server)
      .patch('/api/fleet/clusters/east')
      .send({ labels: {} })
      .expect(403);
    await request(server).delete('/api/fleet/clusters/east').expect(403);
    await request(server)
      .post('/api/fleet/deployments')
      .send({
        entityRef: 'component:default/payments',
        cluster: 'east',
        image: 'x',
      })
      .expect(403);
    await request(server)
      .post('/api/fleet/applications')
      .send({ entityRef: 'component:default/p', spec: {} })
      .expect(403);
  });
});

describe('fleet plugin startup', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it.each([
    ['CLUSTER_HEALTH_FAILURE_THRESHOLD', '0'],
    ['CLUSTER_HEALTH_FAILURE_THRESHOLD', 'abc'],
    ['CLUSTER_HEALTH_INTERVAL', 'soon'],
  ])('stops when %s=%s, naming the variable', async (name, value) => {
    process.env[name] = value;
    await expect(
      startTestBackend({
        features: [
          fleetPlugin,
          mockServices.rootConfig.factory(fleetConfig()),
          mockServices.scheduler.factory(),
        ],
      }),
    ).rejects.toThrow(
      new RegExp(`Invalid environment variable ${name}='${value}'`),
    );
  });
});
