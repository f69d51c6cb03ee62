/*
 * GET /analysis-providers through the whole backend: the providers a release's analysis may
 * name, with the Prometheus servers fleet.analysis.prometheus.allowedAddresses allows (normalised),
 * none when it lists none, and a module's provider beside Fleet's own.
 */
import { createBackendModule } from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { fleetAnalysisProvidersExtensionPoint } from '@cnp/plugin-fleet-node';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { startFleetTestBackend } from './testBackend';
import { createTestDatabases } from './testing/databases';

jest.setTimeout(60_000);

const databases = createTestDatabases();

/** A module adding an analysis provider of type `verdict`. */
const verdictModule = createBackendModule({
  pluginId: 'fleet',
  moduleId: 'test-verdict',
  register(env) {
    env.registerInit({
      deps: { analysis: fleetAnalysisProvidersExtensionPoint },
      async init({ analysis }) {
        analysis.addAnalysisProvider({
          type: 'verdict',
          measure: async ({ template, context }) => ({
            template: template.name,
            cluster: context.cluster,
            condition: template.successCondition,
            at: new Date().toISOString(),
            phase: 'Successful',
            value: 1,
          }),
        });
      },
    });
  },
});

describe.each(databases.eachSupportedId())(
  'analysis providers (%s)',
  databaseId => {
    async function start(fleet: Record<string, unknown>, withModule = false) {
      const kubeconfigDir = await fs.mkdtemp(
        path.join(os.tmpdir(), 'fleet-analysis-'),
      );
      const started = await startFleetTestBackend({
        knex: await databases.init(databaseId),
        kubeconfigDir,
        fleet,
        features: [
          mockServices.scheduler.factory(),
          catalogServiceMock.factory({ entities: [] }),
          ...(withModule ? [verdictModule] : []),
        ],
      });
      return {
        ...started,
        stop: async () => {
          await started.backend.stop();
          await fs.rm(kubeconfigDir, { recursive: true, force: true });
        },
      };
    }

    it('lists the allowed Prometheus servers, normalised, and a module provider; never one carrying credentials', async () => {
      const { server, stop } = await start(
        {
          analysis: {
            prometheus: {
              allowedAddresses: [
                'HTTP://Prometheus.Monitoring.svc:9090/',
                'http://reader:s3cret@prometheus.secure.svc:9090',
                'http://127.0.0.1:9091',
              ],
            },
          },
        },
        true,
      );
      try {
        const res = await request(server)
          .get('/api/fleet/analysis-providers')
          .expect(200);
        expect(JSON.stringify(res.body)).not.toContain('s3cret');
        expect(res.body).toEqual({
          items: [
            {
              type: 'prometheus',
              addresses: [
                'http://prometheus.monitoring.svc:9090',
                'http://127.0.0.1:9091',
              ],
            },
            { type: 'verdict', addresses: null },
          ],
        });
        await request(server)
          .get('/api/fleet/analysis-providers')
          .set('Authorization', mockCredentials.none.header())
          .expect(401);
      } finally {
        await stop();
      }
    });

    it('lists no Prometheus server when the configuration allows none', async () => {
      const { server, stop } = await start({});
      try {
        const res = await request(server)
          .get('/api/fleet/analysis-providers')
          .expect(200);
        expect(res.body).toEqual({
          items: [{ type: 'prometheus', addresses: [] }],
        });
      } finally {
        await stop();
      }
    });
  },
);
