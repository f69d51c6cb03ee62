/*
 * GET /freeze-windows through the whole backend: the windows of fleet.release.freezeWindows,
 * open ones first, each with the registered clusters it selects.
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { startFleetTestBackend } from './testBackend';
import { createTestDatabases } from './testing/databases';

jest.setTimeout(60_000);

const databases = createTestDatabases();

/** Opened in 2020 and open for about 2,700 years. */
const OPEN = {
  name: 'open-on-prod',
  clusterSelector: 'env=prod',
  start: '2020-01-01T00:00:00Z',
  duration: '999999d',
};
/** Opened once in 2020, for an hour: closed for good. */
const CLOSED = {
  name: 'closed',
  start: '2020-01-01T00:00:00Z',
  duration: '1h',
  timeZone: 'Europe/Paris',
};

describe.each(databases.eachSupportedId())(
  'freeze windows (%s)',
  databaseId => {
    it('lists the configured windows, open ones first, with the clusters they select', async () => {
      const kubeconfigDir = await fs.mkdtemp(
        path.join(os.tmpdir(), 'fleet-freeze-'),
      );
      const { backend, server } = await startFleetTestBackend({
        knex: await databases.init(databaseId),
        kubeconfigDir,
        fleet: { release: { freezeWindows: [CLOSED, OPEN] } },
        features: [
          mockServices.scheduler.factory(),
          catalogServiceMock.factory({ entities: [] }),
        ],
      });
      try {
        for (const [name, env] of [
          ['prod-1', 'prod'],
          ['stg-1', 'staging'],
        ]) {
          await request(server)
            .post('/api/fleet/clusters')
            .send({
              name,
              endpoint: `https://${name}.example:6443`,
              kubeconfigRef: `vault:${name}`,
              labels: { env },
            })
            .expect(201);
        }

        const res = await request(server)
          .get('/api/fleet/freeze-windows')
          .expect(200);
        expect(res.body).toEqual({
          items: [
            {
              ...OPEN,
              cron: null,
              timeZone: 'UTC',
              open: true,
              openedAt: '2020-01-01T00:00:00.000Z',
              closesAt: new Date(
                Date.parse(OPEN.start) + 999_999 * 86_400_000,
              ).toISOString(),
              nextOpensAt: null,
              clusters: ['prod-1'],
            },
            {
              ...CLOSED,
              clusterSelector: null,
              cron: null,
              open: false,
              openedAt: null,
              closesAt: null,
              nextOpensAt: null,
              clusters: ['prod-1', 'stg-1'],
            },
          ],
        });

        await request(server)
          .get('/api/fleet/freeze-windows')
          .set('Authorization', mockCredentials.none.header())
          .expect(401);
      } finally {
        await backend.stop();
        await fs.rm(kubeconfigDir, { recursive: true, force: true });
      }
    });
  },
);
