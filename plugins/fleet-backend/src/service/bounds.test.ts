import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { promises as fs, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases, snapshotFleetTables } from '../testing/databases';

// Bounds and leaks: every list answers a page at a time, manual clusters are capped, and only
// cluster admins see where kubeconfigs are and the host's error codes.

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'] });

const ADMIN = 'user:default/admin';
const GUEST = 'user:default/guest';

let workDir: string;
let allowedDir: string;

beforeAll(async () => {
  workDir = realpathSync(
    await fs.mkdtemp(path.join(os.tmpdir(), 'fleet-bounds-')),
  );
  allowedDir = path.join(workDir, 'allowed');
  await fs.mkdir(allowedDir);
  // A kubeconfig the backend may not read (EACCES; as root, it reads it and finds it malformed),
  // beside one that is missing (ENOENT).
  await fs.writeFile(path.join(allowedDir, 'locked.yaml'), 'users: [\n', {
    mode: 0o000,
  });
});

beforeAll(async () => {
  // A usable kubeconfig of a server that is not there.
  await fs.writeFile(
    path.join(allowedDir, 'refusing.yaml'),
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1", insecure-skip-tls-verify: true } }]',
      'users: [{ name: u, user: { token: not-a-real-token } }]',
      'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      'current-context: x',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
});

afterAll(async () => {
  if (workDir) await fs.rm(workDir, { recursive: true, force: true });
});

/**
 * The policy of a fleet with one cluster admin: everyone may do all else. Services are allowed
 * everything, as the permissions service does for a service without access restrictions.
 */
const adminOnlyClusterUpdates = () =>
  mockServices.permissions.mock({
    authorizeConditional: async requests =>
      requests.map(() => ({ result: AuthorizeResult.ALLOW })),
    authorize: async (requests, options) => {
      const principal = options?.credentials.principal as {
        type: string;
        userEntityRef?: string;
      };
      return requests.map(r => ({
        result:
          r.permission.name !== 'fleet.cluster.update' ||
          principal.type === 'service' ||
          principal.userEntityRef === ADMIN
            ? AuthorizeResult.ALLOW
            : AuthorizeResult.DENY,
      }));
    },
  });

describe.each(databases.eachSupportedId())(
  'Fleet API bounds (%s)',
  databaseId => {
    const running: Array<{ stop(): Promise<void> }> = [];
    afterEach(async () => {
      await Promise.all(running.splice(0).map(b => b.stop()));
    });

    async function start(
      options: {
        features?: Parameters<typeof startFleetTestBackend>[0]['features'];
        maxManual?: number;
      } = {},
    ) {
      const knex = await databases.init(databaseId);
      const started = await startFleetTestBackend({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        features: options.features,
        config: {
          fleet: {
            discovery: {
              kubeconfigDir: sim.kubeconfigDir,
              allowedKubeconfigDirs: [allowedDir],
            },
            // Back-to-back manual cycles that each probe and confirm at once.
            health: {
              probeTimeout: { seconds: 2 },
              minOutage: { seconds: 0 },
              manualMinInterval: { seconds: 0 },
            },
            deploy: { pollInterval: { milliseconds: 100 } },
            ...(options.maxManual !== undefined
              ? { clusters: { maxManual: options.maxManual } }
              : {}),
          },
        },
      });
      running.push(started.backend);
      return { ...started, knex };
    }

    /** Every item of a list, page by page, following nextCursor; and how many pages it took. */
    async function walk(
      server: Parameters<typeof request>[0],
      list: string,
      limit: number,
    ) {
      const items: any[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const query = new URLSearchParams({ limit: String(limit) });
        if (cursor) query.set('cursor', cursor);
        const res = await request(server)
          .get(`/api/fleet${list}${list.includes('?') ? '&' : '?'}${query}`)
          .expect(200);
        pages += 1;
        expect(res.body.items.length).toBeLessThanOrEqual(limit);
        items.push(...res.body.items);
        cursor = res.body.nextCursor;
        if (cursor) expect(res.body.items).toHaveLength(limit);
      } while (cursor);
      return { items, pages };
    }

    it('pages GET /clusters, /applications and /deployments by limit and cursor (nextCursor while more remain), and a walk returns every item once', async () => {
      const { server, stores } = await start();
      for (let i = 0; i < 7; i++) {
        await stores.clusters.insertCluster({
          name: `m-${i}`,
          endpoint: `https://10.0.0.${i}:6443`,
          kubeconfigRef: `vault:m-${i}`,
          source: 'manual',
        });
      }
      for (let i = 0; i < 5; i++) {
        const application = await stores.applications.insertApplication({
          entityRef: `component:default/app-${i}`,
          name: `app-${i}`,
          spec: { image: 'nginx:1.27' },
        });
        for (const cluster of ['m-0', 'm-1', 'm-2']) {
          await stores.deployments.insertDeployment(
            { applicationId: application.id, cluster, status: 'DEPLOYED' },
            'test',
          );
        }
      }

      // Without a limit: one page of at most 100, the whole list here, and no nextCursor.
      const all = (await request(server).get('/api/fleet/clusters').expect(200))
        .body;
      expect(all.items).toHaveLength(9); // 7 manual, east and west discovered
      expect(all.nextCursor).toBeUndefined();
      const first = (
        await request(server).get('/api/fleet/clusters?limit=2').expect(200)
      ).body;
      expect(first.items.map((c: { name: string }) => c.name)).toEqual([
        'east',
        'm-0',
      ]);
      expect(first.nextCursor).toEqual(expect.any(String));

      for (const [list, total, key] of [
        ['/clusters', 9, (c: any) => c.name],
        ['/applications', 5, (a: any) => a.id],
        ['/deployments', 15, (d: any) => d.id],
        ['/deployments?cluster=m-1', 5, (d: any) => d.id],
        // The entity card's read: a named prepared statement on PostgreSQL, whatever the limit.
        [
          `/deployments?entityRef=${encodeURIComponent(
            'component:default/app-1',
          )}`,
          3,
          (d: any) => d.id,
        ],
      ] as const) {
        for (const limit of [1, 2, 4, 1000]) {
          const { items, pages } = await walk(server, list, limit);
          expect({ list, limit, n: items.length }).toEqual({
            list,
            limit,
            n: total,
          });
          expect(new Set(items.map(key)).size).toBe(total);
          expect(pages).toBe(Math.max(1, Math.ceil(total / limit)));
        }
      }

      // More than the default page of 100: the first answer stops at 100 and says so.
      for (let i = 7; i < 105; i++) {
        await stores.clusters.insertCluster({
          name: `m-${i}`,
          endpoint: `https://10.0.1.${i}:6443`,
          kubeconfigRef: `vault:m-${i}`,
          source: 'manual',
        });
      }
      const big = (await request(server).get('/api/fleet/clusters').expect(200))
        .body;
      expect(big.items).toHaveLength(100);
      expect(big.nextCursor).toEqual(expect.any(String));
      expect((await walk(server, '/clusters', 1000)).items).toHaveLength(107);
    });

    it('answers a bad limit or cursor with a 400 naming the parameter, never a 500', async () => {
      const { server, knex } = await start();
      const before = await snapshotFleetTables(knex);
      const clustersCursor = (
        await request(server).get('/api/fleet/clusters?limit=1').expect(200)
      ).body.nextCursor;
      const forge = (value: unknown) =>
        Buffer.from(JSON.stringify(value)).toString('base64url');
      const bad: Array<[string, string]> = [
        ['/clusters?limit=0', 'limit'],
        ['/clusters?limit=-1', 'limit'],
        ['/clusters?limit=1001', 'limit'],
        ['/clusters?limit=abc', 'limit'],
        ['/clusters?limit=1.5', 'limit'],
        ['/clusters?limit=1e3', 'limit'],
        ['/clusters?limit=', 'limit'],
        ['/clusters?limit=99999999999999999999', 'limit'],
        ['/clusters?limit=1&limit=2', 'limit'],
        ['/applications?limit=0', 'limit'],
        ['/deployments?limit=1001', 'limit'],
        ['/clusters?cursor=abc', 'cursor'],
        ['/clusters?cursor=', 'cursor'],
        ['/clusters?cursor=%E2%80%AE', 'cursor'],
        [`/clusters?cursor=${'A'.repeat(5000)}`, 'cursor'],
        [`/clusters?cursor=${forge({ l: 'clusters', k: [] })}`, 'cursor'],
        [`/clusters?cursor=${forge({ l: 'clusters', k: [1] })}`, 'cursor'],
        [
          `/clusters?cursor=${forge({ l: 'clusters', k: ['a', 'b'] })}`,
          'cursor',
        ],
        [`/clusters?cursor=${forge(['east'])}`, 'cursor'],
        [
          `/clusters?cursor=${forge({ l: 'clusters', k: ['x'.repeat(600)] })}`,
          'cursor',
        ],
        // One list's cursor is not another's.
        [`/deployments?cursor=${clustersCursor}`, 'cursor'],
        [`/applications?cursor=${clustersCursor}`, 'cursor'],
        [
          `/deployments?cursor=${forge({
            l: 'deployments',
            k: ["' OR 1=1 --"],
          })}`,
          'cursor',
        ],
      ];
      for (const [target, parameter] of bad) {
        const res = await request(server).get(`/api/fleet${target}`);
        expect({ target, status: res.status }).toEqual({ target, status: 400 });
        expect(res.body.error.message).toMatch(
          new RegExp(`^Invalid query: ${parameter}: `),
        );
      }
      // A well-formed key of the right list is no cursor either: only a list's own (signed) are.
      const forged = await request(server)
        .get(
          `/api/fleet/deployments?cursor=${forge({
            l: 'deployments',
            k: ["' OR 1=1 --", 'east'],
          })}`,
        )
        .expect(400);
      expect(forged.body.error.message).toMatch(
        /^Invalid query: cursor: invalid cursor/,
      );
      expect(await snapshotFleetTables(knex)).toBe(before);
    });

    it('refuses POST /clusters beyond fleet.clusters.maxManual with a 409 naming the setting, writing nothing; discovered clusters do not count', async () => {
      const { server, knex } = await start({ maxManual: 2 });
      const register = (name: string) =>
        request(server)
          .post('/api/fleet/clusters')
          .send({
            name,
            // One API server is one cluster: each registration its own.
            endpoint: `https://${name}.example:6443`,
            kubeconfigRef: `vault:${name}`,
          });
      // east and west are discovered: two manual clusters still fit.
      await register('one').expect(201);
      await register('two').expect(201);
      const before = await snapshotFleetTables(knex);
      const refused = await register('three').expect(409);
      expect(refused.body.error).toMatchObject({
        name: 'ConflictError',
        message: expect.stringContaining('fleet.clusters.maxManual'),
      });
      expect(await snapshotFleetTables(knex)).toBe(before);
      // Room again once one goes.
      await request(server).delete('/api/fleet/clusters/one').expect(204);
      await register('three').expect(201);
    });

    it('shows kubeconfigRef paths and errno codes to cluster admins only; others see a generic reason, in clusters, events and deployments', async () => {
      const permissions = adminOnlyClusterUpdates();
      const { server } = await start({ features: [permissions.factory] });
      const as = (who: string) => mockCredentials.user.header(who);
      const missing = path.join(allowedDir, 'missing.yaml');
      const locked = path.join(allowedDir, 'locked.yaml');
      for (const [name, kubeconfigRef] of [
        ['gone', missing],
        ['locked', locked],
      ]) {
        await request(server)
          .post('/api/fleet/clusters')
          .set('Authorization', as(ADMIN))
          .send({
            name,
            endpoint: `https://${name}.example:6443`,
            kubeconfigRef,
          })
          .expect(201);
      }
      await request(server)
        .post('/api/fleet/health/run')
        .set('Authorization', as(ADMIN))
        .expect(200);
      // A deploy to a cluster Fleet cannot use fails, saying why.
      const deployed = await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', as(GUEST))
        .send({
          entityRef: 'component:default/payments',
          cluster: 'gone',
          image: 'nginx:1.27',
        })
        .expect(201);
      expect(deployed.body).toMatchObject({
        status: 'FAILED',
        statusReason: 'CLUSTER_NOT_CONFIGURED',
      });

      const reads = [
        '/clusters',
        '/clusters/gone',
        '/clusters/locked',
        '/clusters/gone/events',
        '/clusters/locked/events',
        '/events',
        '/deployments',
        `/deployments/${deployed.body.id}`,
        `/deployments/${deployed.body.id}/events`,
        `/deployments/${deployed.body.id}/revisions`,
      ];
      const answers = async (who: string) => {
        let text = '';
        for (const read of reads) {
          const res = await request(server)
            .get(`/api/fleet${read}`)
            .set('Authorization', as(who))
            .expect(200);
          text += `${read}: ${res.text}\n`;
        }
        return text;
      };

      // The admin sees where each kubeconfig is and why it cannot be used.
      const admin = await answers(ADMIN);
      expect(admin).toContain(missing);
      expect(admin).toContain('ENOENT');
      const lockedAnswer = await request(server)
        .get('/api/fleet/clusters/locked')
        .set('Authorization', as(ADMIN));
      expect(lockedAnswer.body).toMatchObject({ kubeconfigRef: locked });
      // (root reads any file: the locked one then fails as malformed, not EACCES.)
      expect(lockedAnswer.body.statusReason).toContain(
        process.getuid?.() === 0 ? 'malformed' : 'EACCES',
      );

      // Anyone else: no path, no error code, the same words whatever the file's fate.
      const guest = await answers(GUEST);
      expect(guest).not.toContain(allowedDir);
      expect(guest).not.toContain(workDir);
      expect(guest).not.toMatch(/\bE(NOENT|ACCES|PERM|ISDIR|LOOP)\b/);
      expect(guest).not.toMatch(/kubeconfig(Ref)? ?(file )?'/i);
      const shown = async (name: string) =>
        (
          await request(server)
            .get(`/api/fleet/clusters/${name}`)
            .set('Authorization', as(GUEST))
            .expect(200)
        ).body;
      const gone = await shown('gone');
      expect(gone).toMatchObject({
        kubeconfigRef: null,
        status: 'UNKNOWN',
        statusReason: 'NOT_PROBEABLE: the details are shown to cluster admins',
      });
      expect((await shown('locked')).statusReason).toBe(gone.statusReason);
      // A deploy refused because the cluster is OFFLINE says why, without the host's error code
      // (nothing listens on port 1: ECONNREFUSED).
      await request(server)
        .post('/api/fleet/clusters')
        .set('Authorization', as(ADMIN))
        .send({
          name: 'refusing',
          endpoint: 'https://127.0.0.1:1',
          kubeconfigRef: path.join(allowedDir, 'refusing.yaml'),
        })
        .expect(201);
      for (let i = 0; i < 2; i++) {
        await request(server)
          .post('/api/fleet/health/run')
          .set('Authorization', as(ADMIN))
          .expect(200);
      }
      const refusing = await request(server)
        .get('/api/fleet/clusters/refusing')
        .set('Authorization', as(ADMIN))
        .expect(200);
      expect(refusing.body).toMatchObject({
        status: 'OFFLINE',
        statusReason: expect.stringContaining('ECONNREFUSED'),
      });
      const refused = await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', as(GUEST))
        .send({
          entityRef: 'component:default/payments',
          cluster: 'refusing',
          image: 'nginx:1.27',
        })
        .expect(409);
      expect(refused.body.error.message).toBe(
        "Cluster 'refusing' is OFFLINE (FAILURE_THRESHOLD_REACHED: 2/2 consecutive probes failed: request to https://127.0.0.1:1/api/v1/namespaces?limit=1 failed, reason: the details are shown to cluster admins); deployments to it are refused until it is back ONLINE",
      );

      // A service (another plugin acting for the operators) counts as an admin.
      const service = await request(server)
        .get('/api/fleet/clusters/gone')
        .set('Authorization', mockCredentials.service.header())
        .expect(200);
      expect(service.body.kubeconfigRef).toBe(missing);
      // The permission asked is fleet.cluster.update, once per read.
      permissions.authorize.mockClear();
      await request(server)
        .get('/api/fleet/clusters')
        .set('Authorization', as(GUEST))
        .expect(200);
      expect(permissions.authorize).toHaveBeenCalledTimes(1);
      expect(permissions.authorize.mock.calls[0][0]).toEqual([
        {
          permission: expect.objectContaining({ name: 'fleet.cluster.update' }),
        },
      ]);
    });
  },
);
