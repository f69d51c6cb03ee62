import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { generateKeyPairSync } from 'node:crypto';
import { promises as fs, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { initialProgress } from '../progressive/releaseMachine';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases, snapshotFleetTables } from '../testing/databases';

// Generous: the write-route test waits on background applies, slow on a loaded machine.
jest.setTimeout(240_000);

const databases = createTestDatabases();

/** The simulated fleet Fleet discovers. */
const sim = useSimulator({ clusters: ['east', 'west'] });
/** A cluster Fleet must never reach: its kubeconfig lies outside the allowed directories. */
const bait = useSimulator({ clusters: ['bait'] });
let workDir: string;
/** Allowed by `fleet.discovery.allowedKubeconfigDirs`. */
let allowedDir: string;
/** Not allowed: holds a valid kubeconfig of the bait cluster. */
let outsideDir: string;
let baitKubeconfig: string;

const TOKEN_MARKER = 'fleet-secret-token-7f3a9c1e5b';
// Short: a YAML parser's excerpt of the bad lines would show it whole.
const MALFORMED_MARKER = 'Qz7kP2wX';
let keyPem: string;

beforeAll(async () => {
  workDir = realpathSync(
    await fs.mkdtemp(path.join(os.tmpdir(), 'fleet-security-')),
  );
  allowedDir = path.join(workDir, 'allowed');
  outsideDir = path.join(workDir, 'outside');
  await fs.mkdir(allowedDir);
  await fs.mkdir(outsideDir);
  baitKubeconfig = path.join(outsideDir, 'bait.yaml');
  await fs.copyFile(bait.kubeconfigPath('bait'), baitKubeconfig);
  await fs.symlink(baitKubeconfig, path.join(allowedDir, 'link-to-bait.yaml'));

  // A kubeconfig with every kind of secret a kubeconfig holds: a token, a CA, a client cert and key.
  keyPem = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey;
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  await fs.writeFile(
    path.join(allowedDir, 'vaulted.yaml'),
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: vaulted',
      '  cluster:',
      // Its own API server (one API server is one cluster): bait, which Fleet does not discover.
      `    server: ${bait.endpoint('bait')}`,
      `    certificate-authority-data: ${b64(sim.caPem)}`,
      'users:',
      '- name: vaulted-admin',
      '  user:',
      `    token: ${TOKEN_MARKER}`,
      `    client-certificate-data: ${b64(sim.caPem)}`,
      `    client-key-data: ${b64(keyPem)}`,
      'contexts:',
      '- name: vaulted',
      '  context: { cluster: vaulted, user: vaulted-admin }',
      'current-context: vaulted',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  // Malformed YAML whose bad line holds a secret: the parse error must not quote it back.
  await fs.writeFile(
    path.join(allowedDir, 'malformed.yaml'),
    `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: ${MALFORMED_MARKER}\n   bad: [indentation\n`,
    { mode: 0o600 },
  );
});

afterAll(async () => {
  if (workDir) await fs.rm(workDir, { recursive: true, force: true });
});

interface Seed {
  applicationId: string;
  deploymentId: string;
  /** A release with a strategy, waiting at its first step. */
  releaseId: string;
}

interface RouteCase {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  body?: object;
  /** For write routes: the permission the route must check, and its resource. */
  permission?: string;
  resourceRef?: string;
  /** The clusters it checks fleet.cluster.deploy on, after the entity's permission. */
  clusters?: string[];
  /**
   * Allowed, then refused with a 409 naming the seeded release: it would supersede that running
   * release with a strategy.
   */
  supersedesRelease?: boolean;
}

/** Every route of the Fleet API, with a valid request for each, against the seeded state. */
function allRoutes(seed: Seed): RouteCase[] {
  return [
    { method: 'get', path: '/clusters' },
    { method: 'get', path: '/clusters?status=UNKNOWN' },
    { method: 'get', path: '/clusters/east' },
    { method: 'get', path: '/clusters/east/events' },
    { method: 'get', path: '/summary' },
    { method: 'get', path: '/deployment-counts' },
    { method: 'get', path: '/analysis-providers' },
    { method: 'get', path: '/events' },
    { method: 'get', path: '/events?limit=5' },
    { method: 'get', path: '/applications' },
    {
      method: 'get',
      path: '/applications?entityRef=component:default/payments',
    },
    { method: 'get', path: '/deployments' },
    {
      method: 'get',
      path: '/deployments?entityRef=component:default/payments&cluster=east',
    },
    { method: 'get', path: `/deployments/${seed.deploymentId}` },
    { method: 'get', path: `/deployments/${seed.deploymentId}/revisions` },
    { method: 'get', path: `/releases/${seed.releaseId}` },
    { method: 'get', path: `/deployments/${seed.deploymentId}/events` },
    { method: 'get', path: `/applications/${seed.applicationId}/releases` },
    { method: 'get', path: `/applications/${seed.applicationId}/status` },
    ...writeRoutes(seed),
  ];
}

function writeRoutes(seed: Seed): RouteCase[] {
  return [
    {
      method: 'post',
      path: '/clusters',
      body: {
        name: 'new-one',
        endpoint: 'https://10.0.0.9:6443',
        kubeconfigRef: 'vault:new-one',
      },
      permission: 'fleet.cluster.create',
    },
    {
      method: 'patch',
      path: '/clusters/east',
      body: { labels: { env: 'prod' } },
      permission: 'fleet.cluster.update',
    },
    {
      method: 'delete',
      path: '/clusters/manual-x',
      permission: 'fleet.cluster.delete',
    },
    { method: 'post', path: '/health/run', permission: 'fleet.health.run' },
    {
      method: 'post',
      path: '/applications',
      body: {
        entityRef: 'component:default/fresh',
        spec: { image: 'nginx:1.27' },
      },
      permission: 'fleet.deployment.create',
      resourceRef: 'component:default/fresh',
    },
    {
      method: 'patch',
      path: `/applications/${seed.applicationId}`,
      body: { spec: { replicas: 5 } },
      permission: 'fleet.deployment.create',
      resourceRef: 'component:default/payments',
    },
    {
      method: 'post',
      path: '/deployments',
      body: {
        entityRef: 'component:default/payments',
        cluster: 'west',
        image: 'nginx:1.28',
      },
      permission: 'fleet.deployment.create',
      resourceRef: 'component:default/payments',
      clusters: ['west'],
    },
    {
      method: 'post',
      path: `/deployments/${seed.deploymentId}/rollback`,
      body: { toRevision: 1 },
      permission: 'fleet.deployment.create',
      resourceRef: 'component:default/payments',
      clusters: ['east'],
      supersedesRelease: true,
    },
    {
      method: 'post',
      path: `/applications/${seed.applicationId}/releases`,
      body: { image: 'nginx:1.29' },
      permission: 'fleet.release.manage',
      resourceRef: 'component:default/payments',
      clusters: ['east', 'west'],
      supersedesRelease: true,
    },
    ...(['promote', 'pause', 'resume', 'abort'] as const).map(action => ({
      method: 'post' as const,
      path: `/releases/${seed.releaseId}/${action}`,
      permission: 'fleet.release.manage',
      resourceRef: 'component:default/payments',
    })),
    {
      method: 'delete',
      path: `/deployments/${seed.deploymentId}`,
      permission: 'fleet.deployment.delete',
      resourceRef: 'component:default/payments',
    },
    {
      method: 'delete',
      path: `/applications/${seed.applicationId}`,
      permission: 'fleet.deployment.delete',
      resourceRef: 'component:default/payments',
    },
  ];
}

function call(
  server: Parameters<typeof request>[0],
  route: RouteCase,
  authorization?: string,
) {
  let req = request(server)[route.method](`/api/fleet${route.path}`);
  if (authorization) req = req.set('Authorization', authorization);
  return route.body ? req.send(route.body) : req;
}

describe.each(databases.eachSupportedId())(
  'Fleet API security (%s)',
  databaseId => {
    // Each test stops its backend, so that no rollout it started still talks to the simulator
    // while the next test counts requests.
    const running: Array<{ stop(): Promise<void> }> = [];
    afterEach(async () => {
      await Promise.all(running.splice(0).map(b => b.stop()));
    });

    async function start(
      features: Parameters<typeof startFleetTestBackend>[0]['features'] = [],
    ) {
      const knex = await databases.init(databaseId);
      const started = await startFleetTestBackend({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        allowedKubeconfigDirs: [allowedDir],
        features,
      });
      running.push(started.backend);
      const { stores } = started;
      await stores.clusters.insertCluster({
        name: 'manual-x',
        endpoint: 'https://10.0.0.8:6443',
        kubeconfigRef: 'vault:x',
        source: 'manual',
      });
      const application = await stores.applications.insertApplication({
        entityRef: 'component:default/payments',
        name: 'payments',
        spec: { image: 'nginx:1.27' },
      });
      const deployment = await stores.deployments.insertDeployment(
        {
          applicationId: application.id,
          cluster: 'east',
          status: 'DEPLOYED',
          firstRevision: {
            image: 'nginx:1.27',
            cause: 'deploy',
            createdBy: 'test',
          },
        },
        'test',
      );
      const release = await stores.releases.insertRelease({
        id: '6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b11',
        applicationId: application.id,
        createdBy: 'test',
        request: { image: 'nginx:1.28' },
        strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
        phase: 'PROGRESSING',
        progress: {
          ...initialProgress([['east']], new Date()),
          // East waits at its pause: every steering action applies.
          clusters: [
            {
              cluster: 'east',
              wave: 0,
              state: 'RUNNING',
              stepIndex: 1,
              weight: 50,
              awaitingPromote: true,
              failures: 0,
              inconclusive: 0,
            },
          ],
        },
        targets: [],
        skipped: [],
      });
      return {
        ...started,
        knex,
        seed: {
          applicationId: application.id,
          deploymentId: deployment.id,
          releaseId: release.id,
        },
      };
    }

    const simState = () =>
      JSON.stringify(
        sim
          .clusterNames()
          .map(name => [
            name,
            sim.requestCount(name),
            sim.objects(name).length,
          ]),
      );

    it('answers 401 on every route but /health without valid credentials, and changes nothing', async () => {
      const { server, knex, seed } = await start();
      const routes = allRoutes(seed);
      expect(routes).toHaveLength(34);
      const before = await snapshotFleetTables(knex);
      const simBefore = simState();

      await request(server)
        .get('/api/fleet/health')
        .set('Authorization', mockCredentials.none.header())
        .expect(200, { status: 'ok' });
      const answers: Array<[string, number]> = [];
      for (const route of routes) {
        // (No header at all means the default mock user in a test backend; 'none' is the real case.)
        for (const authorization of [
          mockCredentials.none.header(),
          mockCredentials.user.invalidHeader(),
          mockCredentials.service.invalidHeader(),
        ]) {
          const res = await call(server, route, authorization);
          answers.push([
            `${route.method.toUpperCase()} ${route.path} ${authorization}`,
            res.status,
          ]);
        }
      }
      // Authentication comes first: a malformed or oversized body does not change the answer.
      for (const target of ['/health/run', '/clusters', '/deployments']) {
        for (const body of [
          '{"broken',
          JSON.stringify({ big: 'x'.repeat(70_000) }),
        ]) {
          const res = await request(server)
            .post(`/api/fleet${target}`)
            .set('Authorization', mockCredentials.none.header())
            .set('Content-Type', 'application/json')
            .send(body);
          answers.push([`POST ${target} with a bad body`, res.status]);
        }
      }
      expect(answers.filter(([, status]) => status !== 401)).toEqual([]);
      expect(await snapshotFleetTables(knex)).toBe(before);
      expect(simState()).toBe(simBefore);
    });

    it('answers 403 on every write route when its permission is denied, and changes nothing', async () => {
      const { server, knex, seed } = await start([
        mockServices.permissions.factory({ result: AuthorizeResult.DENY }),
      ]);
      const before = await snapshotFleetTables(knex);
      const simBefore = simState();
      const routes = writeRoutes(seed);
      expect(routes).toHaveLength(15);
      for (const route of routes) {
        const res = await call(server, route);
        expect({
          route: `${route.method} ${route.path}`,
          status: res.status,
          error: res.body.error?.name,
        }).toEqual({
          route: `${route.method} ${route.path}`,
          status: 403,
          error: 'NotAllowedError',
        });
        expect(res.body.error.message).toBe(`Not allowed: ${route.permission}`);
      }
      expect(await snapshotFleetTables(knex)).toBe(before);
      expect(simState()).toBe(simBefore);

      // Reads stay open to any authenticated principal.
      for (const route of allRoutes(seed).filter(r => r.method === 'get')) {
        expect((await call(server, route)).status).toBe(200);
      }
    });

    it('checks the right permission on each write route, for the caller, with the entity as resource', async () => {
      const permissions = mockServices.permissions.mock({
        authorize: async requests =>
          requests.map(() => ({ result: AuthorizeResult.ALLOW })),
        authorizeConditional: async requests =>
          requests.map(() => ({ result: AuthorizeResult.ALLOW })),
      });
      const auditor = mockServices.auditor.mock();
      const { server, seed, stores } = await start([
        permissions.factory,
        auditor.factory,
      ]);
      const caller = 'user:default/ada';

      // The writes that set where an application may go keep the caller's fleet.cluster.deploy
      // decision, which the reconcile places it with; a change of the spec alone (the PATCH here)
      // and a deploy by hand to an application that exists (payments) keep its author's.
      const keepsGrant = new Set(['post /applications']);
      let retries = 0;
      for (const route of writeRoutes(seed)) {
        // An undeploy or a removal answers 409 while a deployment is still being applied (the
        // deploy by hand, the release and its steps above apply in the background): as a
        // caller would, it is asked again once those applies started.
        // A generous bound: on a loaded machine those applies take tens of seconds.
        const deadline = Date.now() + 120_000;
        let res;
        for (;;) {
          permissions.authorize.mockClear();
          permissions.authorizeConditional.mockClear();
          res = await call(server, route, mockCredentials.user.header(caller));
          if (
            res.status !== 409 ||
            route.method !== 'delete' ||
            Date.now() > deadline
          )
            break;
          retries += 1;
          await new Promise(resolve => setTimeout(resolve, 100));
        }
        // A route that would supersede the seeded running release is allowed, then a 409.
        expect({
          route: `${route.method} ${route.path}`,
          ...(res.status >= 300 && !route.supersedesRelease
            ? { answer: [res.status, res.body?.error?.message] }
            : {}),
          ok: route.supersedesRelease
            ? res.status === 409 &&
              String(res.body.error?.message).includes(seed.releaseId)
            : res.status < 300,
        }).toEqual({
          route: `${route.method} ${route.path}`,
          ok: true,
        });
        // The component's permission, then fleet.cluster.deploy on each cluster it puts work on.
        expect(permissions.authorize).toHaveBeenCalledTimes(
          route.clusters ? 2 : 1,
        );
        const [[requests, options], clusterCall] =
          permissions.authorize.mock.calls;
        expect(
          clusterCall?.[0]
            .map((r: any) => [r.permission.name, r.resourceRef])
            .sort(),
        ).toEqual(route.clusters?.map(c => ['fleet.cluster.deploy', c]));
        expect(requests).toEqual([
          expect.objectContaining({
            permission: expect.objectContaining({ name: route.permission }),
            ...(route.resourceRef ? { resourceRef: route.resourceRef } : {}),
          }),
        ]);
        expect((options?.credentials.principal as any).userEntityRef).toBe(
          caller,
        );
        const grantCalls = permissions.authorizeConditional.mock.calls;
        expect(grantCalls.map(([r]) => r[0].permission.name)).toEqual(
          keepsGrant.has(`${route.method} ${route.path}`)
            ? ['fleet.cluster.deploy']
            : [],
        );
      }

      // Who made each manual change is on record: in Fleet's events...
      const actors = async (subject: string) =>
        (
          await stores.events.listEvents({ subjectKind: 'cluster', subject })
        ).map(e => [e.reason, e.actor]);
      expect(await actors('new-one')).toEqual([['NEVER_PROBED', caller]]);
      expect(
        (await actors('east')).find(
          ([reason]) => reason === 'SETTINGS_CHANGED',
        ),
      ).toEqual(['SETTINGS_CHANGED', caller]);
      expect((await actors('manual-x'))[0]).toEqual(['DELETED', caller]);
      const [westDeployment] = await stores.deployments.listDeployments({
        cluster: 'west',
      });
      const deploymentEvents = await stores.events.listEvents({
        subjectKind: 'deployment',
        subject: westDeployment.id,
      });
      expect(deploymentEvents.find(e => e.to === 'PENDING')?.actor).toBe(
        caller,
      );
      // The release was steered by the caller, each step on record.
      const releaseEvents = await stores.events.listEvents({
        subjectKind: 'release',
        subject: seed.releaseId,
      });
      expect(
        releaseEvents.map(e => [e.reason, e.to, e.actor]).reverse(),
      ).toEqual([
        ['PROMOTED', 'PROGRESSING', caller],
        ['PAUSED', 'PAUSED', caller],
        ['RESUMED', 'PROGRESSING', caller],
        ['ABORTED', 'ABORTING', caller],
      ]);
      // ...and in the audit log, for every write including the applications' (a delete asked
      // again after a 409 is audited at each try: once here, the retries counted).
      expect(auditor.createEvent).toHaveBeenCalledTimes(15 + retries);
      expect(
        auditor.createEvent.mock.calls
          .map(([event]) => event.eventId)
          .filter((id, i, ids) => id !== ids[i - 1]),
      ).toEqual([
        'cluster-create',
        'cluster-update',
        'cluster-delete',
        'health-run',
        'application-register',
        'application-update',
        'deployment-create',
        'deployment-rollback',
        'release-create',
        'release-promote',
        'release-pause',
        'release-resume',
        'release-abort',
        'deployment-delete',
        'application-delete',
      ]);
      for (const [event] of auditor.createEvent.mock.calls) {
        expect(event.request?.headers.authorization).toBe(
          mockCredentials.user.header(caller),
        );
      }
    });

    it('shows environment values and Secret references only to callers allowed to deploy the component: others see the names', async () => {
      const env = {
        LOG_LEVEL: 'debug',
        API_TOKEN: 'plain-secret-value-91c2',
        DB_PASSWORD: {
          valueFrom: { secretKeyRef: { name: 'db', key: 'password' } },
        },
      };
      const seedEnv = async (stores: any, seed: Seed) => {
        await stores.applications.updateApplication(seed.applicationId, {
          spec: { image: 'nginx:1.27', env },
        });
        await stores.deployments.startRevision(
          seed.deploymentId,
          { image: 'nginx:1.28', env, cause: 'deploy', createdBy: 'test' },
          'test',
        );
      };
      const reads = (seed: Seed) => [
        `/applications?entityRef=component:default/payments`,
        `/deployments/${seed.deploymentId}/revisions`,
      ];

      const denied = await start([
        mockServices.permissions.factory({ result: AuthorizeResult.DENY }),
      ]);
      await seedEnv(denied.stores, denied.seed);
      const [apps, revisions] = await Promise.all(
        reads(denied.seed).map(p =>
          request(denied.server).get(`/api/fleet${p}`).expect(200),
        ),
      );
      expect(apps.body.items[0].spec.env).toEqual({
        LOG_LEVEL: null,
        API_TOKEN: null,
        DB_PASSWORD: null,
      });
      expect(revisions.body.items[0].env).toEqual({
        LOG_LEVEL: null,
        API_TOKEN: null,
        DB_PASSWORD: null,
      });
      expect(JSON.stringify([apps.body, revisions.body])).not.toContain(
        'plain-secret-value-91c2',
      );
      await denied.backend.stop();

      const allowed = await start();
      await seedEnv(allowed.stores, allowed.seed);
      const app = await request(allowed.server)
        .get(`/api/fleet${reads(allowed.seed)[0]}`)
        .expect(200);
      expect(app.body.items[0].spec.env).toEqual(env);
    });

    it('bounds request bodies and names, answering 400 or 413, never 500', async () => {
      const { server, knex } = await start();
      const before = await snapshotFleetTables(knex);
      const cluster = {
        name: 'bounded',
        endpoint: 'https://10.0.0.1:6443',
        kubeconfigRef: 'vault:x',
      };
      const cases: Array<[object | string, number]> = [
        [{ ...cluster, labels: { big: 'x'.repeat(70_000) } }, 413],
        [{ ...cluster, name: 'a'.repeat(64) }, 400],
        [{ ...cluster, kubeconfigRef: `/${'a'.repeat(1030)}` }, 400],
        [{ ...cluster, kubeconfigRef: 'vault:x\nINFO forged log line' }, 400],
        [
          {
            ...cluster,
            kubeconfigRef: `{"apiVersion":"v1","users":[{"user":{"token":"${TOKEN_MARKER}"}}]}`,
          },
          400,
        ],
        [
          {
            ...cluster,
            labels: Object.fromEntries(
              Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']),
            ),
          },
          400,
        ],
        [{ ...cluster, context: 'c'.repeat(254) }, 400],
        // PostgreSQL cannot store a NUL: it must be refused before it gets there.
        [{ ...cluster, endpoint: 'https://10.0.0.1:6443/\u0000x' }, 400],
        [{ ...cluster, context: 'a\u0000b' }, 400],
        // Bidirectional and zero-width characters would show one text and store another.
        [{ ...cluster, endpoint: 'https://10.0.0.1:6443/\u202emoc.live' }, 400],
        [{ ...cluster, endpoint: 'https://10.0.\u200b0.1:6443' }, 400],
        [{ ...cluster, kubeconfigRef: 'vault:\u202ex' }, 400],
        [`{"name": "${TOKEN_MARKER}`, 400],
      ];
      for (const [body, status] of cases) {
        const res = await request(server)
          .post('/api/fleet/clusters')
          .set('Content-Type', 'application/json')
          .send(typeof body === 'string' ? body : JSON.stringify(body));
        expect({
          body: JSON.stringify(body).slice(0, 60),
          status: res.status,
        }).toEqual({
          body: JSON.stringify(body).slice(0, 60),
          status,
        });
        expect(JSON.stringify(res.body)).not.toContain(TOKEN_MARKER);
      }
      for (const image of ['nginx\u0000:1', 'nginx:1\u007f']) {
        const res = await request(server)
          .post('/api/fleet/deployments')
          .send({ entityRef: 'component:default/p', cluster: 'east', image });
        expect(res.status).toBe(400);
        expect(res.body.error.message).toContain('image');
      }
      await request(server)
        .get(`/api/fleet/clusters/${'a'.repeat(64)}`)
        .expect(404); // longer than any cluster name can be
      await request(server)
        .get(`/api/fleet/applications?entityRef=${'a'.repeat(300)}`)
        .expect(400);
      await request(server)
        .get('/api/fleet/deployments?cluster=Not_A_Name')
        .expect(400);
      await request(server)
        .get('/api/fleet/clusters?status=ONLINE&status=OFFLINE')
        .expect(400);
      expect(await snapshotFleetTables(knex)).toBe(before);
    });

    it('never opens a kubeconfigRef outside the allowed directories: relative, absolute, traversal or symlink', async () => {
      // Every file Fleet opens (kubeconfigs are opened once with fs.promises.open, then read
      // through that descriptor and parsed).
      const readFile = jest.spyOn(fs, 'open');
      try {
        const { server } = await start();
        const baitRequests = bait.requestCount('bait');
        const refs: Record<string, string> = {
          'rel-passwd': '../../etc/passwd',
          'abs-passwd': '/etc/passwd',
          'abs-outside': baitKubeconfig,
          traversal: `${allowedDir}/../outside/bait.yaml`,
          'rel-outside': path.relative(process.cwd(), baitKubeconfig),
          symlink: path.join(allowedDir, 'link-to-bait.yaml'),
        };
        for (const [name, kubeconfigRef] of Object.entries(refs)) {
          // Each its own server URL on the bait (one API server is one cluster; a reference
          // Fleet does not open leaves the endpoint alone as the identity).
          await request(server)
            .post('/api/fleet/clusters')
            .send({
              name,
              endpoint: `${bait.endpoint('bait')}/${name}`,
              kubeconfigRef,
            })
            .expect(201);
        }
        await request(server).post('/api/fleet/health/run').expect(200);
        await request(server).post('/api/fleet/health/run').expect(200);
        for (const name of Object.keys(refs)) {
          const res = await request(server)
            .post('/api/fleet/deployments')
            .send({
              entityRef: `component:default/app-${name}`,
              cluster: name,
              image: 'nginx:1.27',
            })
            .expect(201);
          expect(res.body).toMatchObject({
            status: 'FAILED',
            statusReason: 'CLUSTER_NOT_CONFIGURED',
          });
          const cluster = (
            await request(server).get(`/api/fleet/clusters/${name}`).expect(200)
          ).body;
          expect({
            name,
            status: cluster.status,
            reason: cluster.statusReason,
          }).toEqual({
            name,
            status: 'UNKNOWN',
            reason: expect.stringMatching(
              /^NOT_PROBEABLE: kubeconfigRef '.*' is (an opaque reference|outside the allowed kubeconfig directories)/,
            ),
          });
        }
        expect(bait.requestCount('bait')).toBe(baitRequests);
        const opened = readFile.mock.calls
          .map(([file]) => file)
          .filter((file): file is string => typeof file === 'string')
          .map(file => realpathSync(file));
        expect(opened.length).toBeGreaterThan(0);
        const simDir = realpathSync(sim.kubeconfigDir);
        expect(
          opened.filter(
            file =>
              !file.startsWith(`${simDir}/`) &&
              !file.startsWith(`${allowedDir}/`),
          ),
        ).toEqual([]);

        // The same kubeconfig copied inside the allowed directory is used: the check above could fail.
        await fs.copyFile(
          baitKubeconfig,
          path.join(allowedDir, 'bait-allowed.yaml'),
        );
        await request(server)
          .post('/api/fleet/clusters')
          .send({
            name: 'control',
            endpoint: bait.endpoint('bait'),
            kubeconfigRef: path.join(allowedDir, 'bait-allowed.yaml'),
          })
          .expect(201);
        await request(server).post('/api/fleet/health/run').expect(200);
        expect(
          (await request(server).get('/api/fleet/clusters/control')).body
            .status,
        ).toBe('ONLINE');
        expect(bait.requestCount('bait')).toBeGreaterThan(baitRequests);
        await request(server).delete('/api/fleet/clusters/control').expect(204);
        await fs.rm(path.join(allowedDir, 'bait-allowed.yaml'));
      } finally {
        readFile.mockRestore();
      }
    });

    it("never sends a kubeconfig's credentials to an endpoint other than its server", async () => {
      const { server } = await start();
      await fs.copyFile(
        sim.kubeconfigPath('west'),
        path.join(allowedDir, 'west-copy.yaml'),
      );
      try {
        const baitRequests = bait.requestCount('bait');
        await request(server)
          .post('/api/fleet/clusters')
          .send({
            name: 'redirected',
            endpoint: bait.endpoint('bait'),
            kubeconfigRef: path.join(allowedDir, 'west-copy.yaml'),
          })
          .expect(201);
        await request(server).post('/api/fleet/health/run').expect(200);
        const cluster = (
          await request(server).get('/api/fleet/clusters/redirected')
        ).body;
        expect(cluster).toMatchObject({ status: 'UNKNOWN' });
        expect(cluster.statusReason).toMatch(
          /is not the server of kubeconfig file/,
        );
        expect(bait.requestCount('bait')).toBe(baitRequests);
      } finally {
        await fs.rm(path.join(allowedDir, 'west-copy.yaml'));
      }
    });

    it('no answer of any route contains kubeconfig contents, tokens, certificates or keys', async () => {
      const { server, seed } = await start();
      const b64 = (text: string) =>
        Buffer.from(text, 'utf8').toString('base64');
      const pemBody = (pem: string) =>
        pem.split('\n').filter(l => l && !l.startsWith('-----'))[1];
      const secrets = [
        sim.token('east'),
        sim.token('west'),
        TOKEN_MARKER,
        MALFORMED_MARKER,
        pemBody(sim.caPem),
        b64(sim.caPem).slice(0, 40),
        pemBody(keyPem),
        b64(keyPem).slice(0, 40),
        'BEGIN CERTIFICATE',
        'PRIVATE KEY',
        'certificate-authority-data',
        'client-key-data',
        'current-context',
      ];

      const answers: string[] = [];
      const record = async (req: request.Test) => {
        const res = await req;
        answers.push(`${res.status} ${res.text}`);
        return res;
      };
      const api = () => request(server);

      await record(
        api()
          .post('/api/fleet/clusters')
          .send({
            name: 'vaulted',
            endpoint: bait.endpoint('bait'),
            kubeconfigRef: path.join(allowedDir, 'vaulted.yaml'),
            labels: { tier: 'gold' },
          }),
      );
      await record(
        api()
          .post('/api/fleet/clusters')
          .send({
            name: 'malformed',
            endpoint: 'https://malformed.example:6443',
            kubeconfigRef: path.join(allowedDir, 'malformed.yaml'),
          }),
      );
      await record(
        api()
          .post('/api/fleet/clusters')
          .send({
            name: 'vaulted',
            endpoint: sim.endpoint('east'),
            kubeconfigRef: 'dup',
          }),
      );
      await record(
        api()
          .post('/api/fleet/clusters')
          .send({
            name: 'x',
            endpoint: 'https://x',
            kubeconfigRef: `token: ${TOKEN_MARKER}\napiVersion: v1`,
          }),
      );
      await record(api().post('/api/fleet/health/run'));
      await record(api().post('/api/fleet/health/run'));
      sim.setFault('west', { mode: 'error' });
      await record(api().post('/api/fleet/health/run'));
      await record(
        api()
          .patch('/api/fleet/clusters/vaulted')
          .send({ labels: { tier: 'silver' }, failureThreshold: 3 }),
      );
      await record(
        api()
          .post('/api/fleet/applications')
          .send({
            entityRef: 'component:default/scanned',
            origin: 'scaffolded',
            spec: { image: 'nginx:1.27', env: { MODE: 'scan' } },
          }),
      );
      for (const cluster of ['east', 'vaulted', 'malformed', 'west', 'nope']) {
        await record(
          api()
            .post('/api/fleet/deployments')
            .send({ entityRef: 'component:default/scanned', cluster }),
        );
      }
      await record(
        api()
          .patch(`/api/fleet/applications/${seed.applicationId}`)
          .send({ spec: { replicas: 2 } }),
      );
      const clusters = (await record(api().get('/api/fleet/clusters'))).body
        .items as Array<{ name: string }>;
      expect(clusters.map(c => c.name)).toEqual(
        expect.arrayContaining(['east', 'west', 'vaulted', 'malformed']),
      );
      for (const { name } of clusters) {
        await record(api().get(`/api/fleet/clusters/${name}`));
        await record(api().get(`/api/fleet/clusters/${name}/events`));
      }
      await record(api().get('/api/fleet/summary'));
      await record(api().get('/api/fleet/events?limit=500'));
      await record(api().get('/api/fleet/applications'));
      const deployments = (await record(api().get('/api/fleet/deployments')))
        .body.items as Array<{ id: string }>;
      expect(deployments.length).toBeGreaterThanOrEqual(4);
      for (const { id } of deployments) {
        await record(api().get(`/api/fleet/deployments/${id}/events`));
      }
      await record(api().delete('/api/fleet/clusters/malformed'));
      await record(api().get('/api/fleet/health'));

      // The scan sees what it should: the clusters' references and reasons, with their secrets.
      const all = answers.join('\n');
      expect(all).toContain(path.join(allowedDir, 'vaulted.yaml'));
      expect(all).toMatch(/malformed\.yaml' is malformed/);
      for (const secret of secrets) {
        expect({ secret, found: all.includes(secret) }).toEqual({
          secret,
          found: false,
        });
      }
    });
  },
);
