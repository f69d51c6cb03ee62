import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases } from '../testing/databases';
import { PageCursors } from './paging';

// Every list is paged, a deployment's revisions and an application's releases included, and
// its cursors are signed: only a cursor a list handed out pages on.

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east'] });

describe('signed cursors', () => {
  const cursors = PageCursors.create(Buffer.alloc(32, 7));

  it('reads back the key of a cursor it made, for its list and scope only', () => {
    const cursor = cursors.encode('revisions', ['12'], 'dep-1');
    expect(cursors.decode('revisions', cursor, 'dep-1')).toEqual(['12']);
    expect(() => cursors.decode('revisions', cursor, 'dep-2')).toThrow(
      'invalid cursor',
    );
    expect(() => cursors.decode('releases', cursor, 'dep-1')).toThrow(
      'invalid cursor',
    );
  });

  it('refuses a tampered cursor (400 invalid cursor), and one signed with another key', () => {
    const cursor = cursors.encode('clusters', ['m-1']);
    const [payload, mac] = cursor.split('.');
    const changed = Buffer.from(
      JSON.stringify({ l: 'clusters', k: ['a'] }),
    ).toString('base64url');
    for (const bad of [
      `${changed}.${mac}`,
      `${payload}.${mac.slice(0, -2)}AA`,
      `${payload}.`,
      payload,
      PageCursors.create(Buffer.alloc(32, 8)).encode('clusters', ['m-1']),
    ]) {
      expect(() => cursors.decode('clusters', bad)).toThrow(
        /^Invalid query: cursor: invalid cursor/,
      );
    }
  });
});

describe.each(databases.eachSupportedId())(
  'paged revisions and releases (%s)',
  databaseId => {
    const running: Array<{ stop(): Promise<void> }> = [];
    afterEach(async () => {
      await Promise.all(running.splice(0).map(b => b.stop()));
    });

    async function start() {
      const knex = await databases.init(databaseId);
      const started = await startFleetTestBackend({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
      });
      running.push(started.backend);
      const { stores } = started;
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
      return { ...started, knex, application, deployment };
    }

    /** Every item of a list, page by page, following nextCursor. */
    async function walk(
      server: Parameters<typeof request>[0],
      list: string,
      limit?: number,
    ) {
      const items: any[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const query = new URLSearchParams(
          limit ? { limit: String(limit) } : {},
        );
        if (cursor) query.set('cursor', cursor);
        const res = await request(server)
          .get(`/api/fleet${list}?${query}`)
          .expect(200);
        pages += 1;
        items.push(...res.body.items);
        cursor = res.body.nextCursor;
        if (cursor) expect(res.body.items).toHaveLength(limit ?? 100);
      } while (cursor);
      return { items, pages };
    }

    it('pages GET /deployments/:id/revisions and GET /applications/:id/releases by limit (default 100) and cursor, newest first, each item once', async () => {
      const { server, stores, application, deployment } = await start();
      // 160 revisions after the first: more than a default page.
      for (let i = 0; i < 160; i++) {
        await stores.deployments.startRevision(
          deployment.id,
          { image: `nginx:1.${i}`, cause: 'deploy', createdBy: 'test' },
          'test',
        );
      }
      // Releases made within the same milliseconds too: the id orders them.
      for (let i = 0; i < 7; i++) {
        await stores.releases.insertRelease({
          id: `00000000-0000-4000-8000-00000000000${i}`,
          applicationId: application.id,
          createdBy: 'test',
          request: { image: `nginx:2.${i}` },
          targets: [],
          skipped: [],
        });
      }
      const revisions = `/deployments/${deployment.id}/revisions`;
      const first = await request(server)
        .get(`/api/fleet${revisions}`)
        .expect(200);
      expect(first.body.items).toHaveLength(100);
      expect(first.body.items[0].revision).toBe(161);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      for (const limit of [undefined, 1, 7, 1000]) {
        const { items, pages } = await walk(server, revisions, limit);
        expect(items.map((r: { revision: number }) => r.revision)).toEqual(
          Array.from({ length: 161 }, (_, i) => 161 - i),
        );
        expect(pages).toBe(Math.max(1, Math.ceil(161 / (limit ?? 100))));
      }

      const releases = `/applications/${application.id}/releases`;
      const all = (await request(server).get(`/api/fleet${releases}`)).body;
      expect(all.items).toHaveLength(7);
      expect(all.nextCursor).toBeUndefined();
      for (const limit of [1, 2, 3]) {
        const { items } = await walk(server, releases, limit);
        expect(items.map((r: { id: string }) => r.id)).toEqual(
          all.items.map((r: { id: string }) => r.id),
        );
      }
      const createdAt = all.items.map((r: { createdAt: string }) =>
        Date.parse(r.createdAt),
      );
      expect(createdAt).toEqual([...createdAt].sort((a, b) => b - a));
    });

    it('answers 400 invalid cursor for a tampered cursor, or one of another list or deployment', async () => {
      const { server, stores, application, deployment } = await start();
      for (let i = 0; i < 3; i++) {
        await stores.deployments.startRevision(
          deployment.id,
          { image: `nginx:1.${i}`, cause: 'deploy', createdBy: 'test' },
          'test',
        );
      }
      const other = await stores.deployments.insertDeployment(
        {
          applicationId: (
            await stores.applications.insertApplication({
              entityRef: 'component:default/other',
              name: 'other',
              spec: { image: 'nginx:1.27' },
            })
          ).id,
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
      const cursor = (
        await request(server)
          .get(`/api/fleet/deployments/${deployment.id}/revisions?limit=1`)
          .expect(200)
      ).body.nextCursor as string;
      const [payload, mac] = cursor.split('.');
      const tampered = `${Buffer.from(
        JSON.stringify({ l: 'revisions', s: deployment.id, k: ['1'] }),
      ).toString('base64url')}.${mac}`;
      for (const target of [
        `/deployments/${deployment.id}/revisions?cursor=${tampered}`,
        `/deployments/${deployment.id}/revisions?cursor=${payload}`,
        `/deployments/${other.id}/revisions?cursor=${cursor}`,
        `/applications/${application.id}/releases?cursor=${cursor}`,
        `/clusters?cursor=${cursor}`,
        `/deployments/${deployment.id}/revisions?limit=0`,
        `/applications/${application.id}/releases?limit=1001`,
      ]) {
        const res = await request(server).get(`/api/fleet${target}`);
        expect({ target, status: res.status }).toEqual({ target, status: 400 });
        expect(res.body.error.message).toMatch(
          /^Invalid query: (cursor: invalid cursor|limit: )/,
        );
      }
      // The cursor as handed out pages on.
      const next = await request(server)
        .get(
          `/api/fleet/deployments/${deployment.id}/revisions?limit=1&cursor=${cursor}`,
        )
        .expect(200);
      expect(next.body.items[0].revision).toBe(3);
    });

    it('signs with one key for every replica, kept in the database', async () => {
      const { stores } = await start();
      const key = await stores.state.cursorSigningKey();
      expect(key).toHaveLength(32);
      expect(await stores.state.cursorSigningKey()).toEqual(key);
    });
  },
);
