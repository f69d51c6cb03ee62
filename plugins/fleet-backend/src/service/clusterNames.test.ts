import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases } from '../testing/databases';

// GET /clusters?name=a&name=b: the clusters a card shows, by name, instead of the whole fleet;
// the same answer as the list's (kubeconfigRefs for cluster admins only), bounded and checked.

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east'] });

const ADMIN = 'user:default/admin';
const GUEST = 'user:default/guest';

/** Only ADMIN may update clusters (and so sees kubeconfigRefs); everyone may do all else. */
const adminOnlyClusterUpdates = () =>
  mockServices.permissions.mock({
    authorizeConditional: async requests =>
      requests.map(() => ({ result: AuthorizeResult.ALLOW })),
    authorize: async (requests, options) => {
      const principal = options?.credentials.principal as {
        userEntityRef?: string;
      };
      return requests.map(r => ({
        result:
          r.permission.name !== 'fleet.cluster.update' ||
          principal.userEntityRef === ADMIN
            ? AuthorizeResult.ALLOW
            : AuthorizeResult.DENY,
      }));
    },
  });

describe.each(databases.eachSupportedId())(
  'GET /clusters?name= (%s)',
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
        features: [adminOnlyClusterUpdates().factory],
      });
      running.push(started.backend);
      for (let i = 0; i < 30; i++) {
        const name = `m-${String(i).padStart(2, '0')}`;
        await started.stores.clusters.insertCluster({
          name,
          endpoint: `https://10.0.0.${i}:6443`,
          kubeconfigRef: `vault:${name}`,
          source: 'manual',
        });
      }
      return started;
    }

    const as = (who: string) => mockCredentials.user.header(who);
    const names = (n: number) =>
      Array.from({ length: n }, (_, i) => `m-${String(i).padStart(2, '0')}`);

    it('answers only the clusters named, in name order, leaving out unknown names, with the list view of each', async () => {
      const { server } = await start();
      const get = (query: string, who: string) =>
        request(server)
          .get(`/api/fleet/clusters?${query}`)
          .set('Authorization', as(who))
          .expect(200);
      const guest = (await get('name=m-03&name=m-01&name=nope', GUEST)).body;
      expect(guest.items.map((c: any) => c.name)).toEqual(['m-01', 'm-03']);
      expect(guest.nextCursor).toBeUndefined();
      // Whom the list shows kubeconfigRefs stays the same with a filter.
      expect(guest.items[0].kubeconfigRef).toBeNull();
      const admin = (await get('name=m-01', ADMIN)).body;
      expect(admin.items).toEqual([
        expect.objectContaining({ name: 'm-01', kubeconfigRef: 'vault:m-01' }),
      ]);
      // More repeats than Express's query parser keeps as an array.
      const many = names(25);
      expect(
        (await get(many.map(n => `name=${n}`).join('&'), GUEST)).body.items.map(
          (c: any) => c.name,
        ),
      ).toEqual(many);
      // With the status filter; a name of no cluster answers an empty list.
      expect((await get('name=m-01&status=OFFLINE', GUEST)).body.items).toEqual(
        [],
      );
      expect((await get('name=m-01&status=UNKNOWN', GUEST)).body.items).toEqual(
        [expect.objectContaining({ name: 'm-01' })],
      );
      expect((await get('name=nope', GUEST)).body.items).toEqual([]);
      // Without it, the whole list as before (the 30 and the simulator's discovered one).
      expect((await get('limit=1000', GUEST)).body.items).toHaveLength(31);
    });

    it('refuses more than 100 names, a name that is no DNS-1123 label and other shapes of name, saying why (400)', async () => {
      const { server } = await start();
      const bad: Array<[string, RegExp]> = [
        [
          Array.from({ length: 101 }, (_, i) => `name=c-${i}`).join('&'),
          /^Invalid query: name: at most 100 names/,
        ],
        ['name=Not_A_Label', /^Invalid query: name\.0: must be a DNS-1123/],
        ['name=', /^Invalid query: name\.0: must be a DNS-1123/],
        ['name[x]=m-01', /^Invalid query: name: give each cluster as its own/],
        ['name[]=m-01', /^Invalid query: name: give each cluster as its own/],
      ];
      for (const [query, message] of bad) {
        const res = await request(server)
          .get(`/api/fleet/clusters?${query}`)
          .set('Authorization', as(GUEST));
        expect({ query: query.slice(0, 40), status: res.status }).toEqual({
          query: query.slice(0, 40),
          status: 400,
        });
        expect(res.body.error.message).toMatch(message);
      }
    });
  },
);
