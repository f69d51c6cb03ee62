import { mockCredentials } from '@backstage/backend-test-utils';
import { createMockActionContext } from '@backstage/plugin-scaffolder-node-test-utils';
import { createTestDatabases } from '@cnp/fleet-harness';
import { FleetApiClient } from '@cnp/plugin-fleet-node';
import request from 'supertest';
import { createFleetRegisterApplicationAction } from './createFleetRegisterApplicationAction';
import {
  startFleetForActions,
  type Authorization,
} from './__testUtils__/fleetForActions';

jest.setTimeout(60_000);

const databases = createTestDatabases();
let fleet: Awaited<ReturnType<typeof startFleetForActions>>['fleet'];
let client: FleetApiClient;
let authorized: Authorization[];

describe.each(databases.eachSupportedId())(
  'fleet:application:register (%s)',
  databaseId => {
    beforeAll(async () => {
      ({ fleet, client, authorized } = await startFleetForActions(
        databases,
        databaseId,
      ));
    });

    const action = () => createFleetRegisterApplicationAction({ client });

    it('records the application with origin scaffolded, on behalf of the initiator', async () => {
      const ctx = createMockActionContext({
        input: {
          entityRef: 'component:default/scaffolded-app',
          spec: {
            image: 'ghcr.io/acme/scaffolded-app:1.0',
            replicas: 2,
            port: 8080,
          },
          placement: { clusters: ['alpha'] },
        },
      });
      authorized.length = 0;
      await action().handler(ctx);

      const [applicationId] = (ctx.output as jest.Mock).mock.calls
        .filter(([name]) => name === 'applicationId')
        .map(([, value]) => value);
      expect(applicationId).toMatch(/^[0-9a-f-]{36}$/);
      const apps = await request(fleet.server)
        .get(
          '/api/fleet/applications?entityRef=component:default/scaffolded-app',
        )
        .expect(200);
      expect(apps.body.items).toEqual([
        expect.objectContaining({
          id: applicationId,
          origin: 'scaffolded',
          name: 'scaffolded-app',
          spec: {
            image: 'ghcr.io/acme/scaffolded-app:1.0',
            replicas: 2,
            port: 8080,
          },
          placement: { clusters: ['alpha'] },
        }),
      ]);
      expect(authorized).toEqual([
        // The registration: the component, then the cluster its placement names.
        {
          permission: 'fleet.deployment.create',
          resourceRef: 'component:default/scaffolded-app',
          user: 'user:default/mock',
        },
        {
          permission: 'fleet.cluster.deploy',
          resourceRef: 'alpha',
          user: 'user:default/mock',
        },
        // The test's read of the application (who may see its env values).
        {
          permission: 'fleet.deployment.create',
          resourceRef: 'component:default/scaffolded-app',
          user: 'user:default/mock',
        },
      ]);
    });

    it('records a component that brings its own manifests with no image', async () => {
      const ctx = createMockActionContext({
        input: {
          entityRef: 'component:default/own-manifests',
          spec: {},
          placement: { clusters: ['bravo'] },
        },
      });
      await action().handler(ctx);

      const apps = await request(fleet.server)
        .get(
          '/api/fleet/applications?entityRef=component:default/own-manifests',
        )
        .expect(200);
      expect(apps.body.items).toEqual([
        expect.objectContaining({
          origin: 'scaffolded',
          name: 'own-manifests',
          spec: {},
          placement: { clusters: ['bravo'] },
        }),
      ]);
      expect(ctx.output).toHaveBeenCalledWith(
        'applicationId',
        apps.body.items[0].id,
      );
    });

    it("fails the step with Fleet's words when Fleet refuses", async () => {
      const again = createMockActionContext({
        input: {
          entityRef: 'component:default/scaffolded-app',
          spec: { image: 'nginx:1.27' },
        },
      });
      await expect(action().handler(again)).rejects.toThrow(
        /Fleet did not register component:default\/scaffolded-app: Fleet answered 409 Conflict: .*already/,
      );

      const denied = {
        ...createMockActionContext({
          input: {
            entityRef: 'component:default/not-mine',
            spec: { image: 'nginx:1.27' },
          },
        }),
        getInitiatorCredentials: async () =>
          mockCredentials.user('user:default/mallory'),
      };
      await expect(action().handler(denied)).rejects.toThrow(
        /403 Forbidden: Not allowed: fleet.deployment.create/,
      );
      const unknownCluster = createMockActionContext({
        input: {
          entityRef: 'component:default/elsewhere',
          spec: { image: 'nginx:1.27' },
          placement: { clusters: ['nope'] },
        },
      });
      await expect(action().handler(unknownCluster)).rejects.toThrow(
        /400 Bad Request: Placement names an unknown cluster 'nope'/,
      );
      const apps = await request(fleet.server)
        .get('/api/fleet/applications')
        .expect(200);
      expect(
        apps.body.items.map((a: { entityRef: string }) => a.entityRef),
      ).not.toContain('component:default/not-mine');
    });

    it('changes nothing in a dry run', async () => {
      const ctx = {
        ...createMockActionContext({
          input: {
            entityRef: 'component:default/dry',
            spec: { image: 'nginx:1.27' },
          },
        }),
        isDryRun: true,
      };
      await action().handler(ctx);
      expect(ctx.output).toHaveBeenCalledWith('applicationId', 'dry-run');
      const apps = await request(fleet.server)
        .get('/api/fleet/applications?entityRef=component:default/dry')
        .expect(200);
      expect(apps.body.items).toEqual([]);
    });
  },
);
