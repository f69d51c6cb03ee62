import {
  coreServices,
  createBackendModule,
  type SchedulerService,
} from '@backstage/backend-plugin-api';
import { mockCredentials } from '@backstage/backend-test-utils';
import {
  eventsServiceRef,
  type EventParams,
} from '@backstage/plugin-events-node';
import type { SignalPayload } from '@backstage/plugin-signals-node';
import {
  fleetSignalChannels,
  type FleetSignalMessage,
} from '@cnp/plugin-fleet-common';
import { createTestDatabases, useSimulator } from '@cnp/fleet-harness';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { stringify } from 'yaml';
import { startChainBackend } from './__testUtils__/chainBackend';

jest.setTimeout(120_000);

/*
 * A placement by selector is acted on by the reconcile, in the background, with no caller to
 * ask: it uses the fleet.cluster.deploy decision of the user who last registered, changed or
 * deployed the application, evaluated on each cluster with its labels as they are at that run.
 * The real permission backend, the app's policy and the catalog decide; nothing is mocked in
 * the chain.
 */

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'], readyDelayMs: 50 });

const entities = [
  ...['team-a', 'team-b'].map((name, i) => ({
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Group',
    metadata: { name },
    spec: { type: 'team', children: [], members: [['alice', 'bob'][i]] },
  })),
  ...['alice', 'bob'].map(name => ({
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'User',
    metadata: { name },
    spec: { memberOf: [] },
  })),
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: { name: 'orders', annotations: { 'cnp.io/image': 'orders:1' } },
    spec: { type: 'service', lifecycle: 'production', owner: 'group:team-b' },
  },
];

describe.each(databases.eachSupportedId())(
  'placement by selector under the real permission chain (%s)',
  databaseId => {
    it('places only on the clusters the placement author may deploy to, shows the refused ones on the application, and follows the cluster labels as they change', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-placement-'));
      const file = path.join(dir, 'entities.yaml');
      fs.writeFileSync(file, entities.map(e => stringify(e)).join('---\n'));
      const entityRef = 'component:default/orders';
      let scheduler: SchedulerService | undefined;
      const heard: Array<SignalPayload<FleetSignalMessage>> = [];
      const placementSignals = () =>
        heard
          .filter(
            p =>
              p.channel === fleetSignalChannels.deploymentsOf(entityRef) &&
              p.message.kind === 'placement',
          )
          .flatMap(p => p.message.changes);
      const { server, knex } = await startChainBackend({
        databases,
        databaseId,
        entitiesFile: file,
        allowKinds: ['Component', 'Group', 'User'],
        fleet: {
          discovery: { kubeconfigDir: sim.kubeconfigDir },
          deploy: { pollInterval: { milliseconds: 50 } },
          reconcile: { interval: { minutes: 10 } },
          permissions: { clusterAdmins: ['group:default/team-a'] },
        },
        features: [
          // What Backstage's signals service published, read where the signals backend reads it.
          createBackendModule({
            pluginId: 'fleet',
            moduleId: 'test-signals-listener',
            register(reg) {
              reg.registerInit({
                deps: { events: eventsServiceRef },
                async init({ events }) {
                  await events.subscribe({
                    id: 'test-signals-listener',
                    topics: ['signals'],
                    async onEvent(params: EventParams) {
                      heard.push(
                        params.eventPayload as SignalPayload<FleetSignalMessage>,
                      );
                    },
                  });
                },
              });
            },
          }),
          // Lets the test run Fleet's reconcile now rather than at its schedule.
          createBackendModule({
            pluginId: 'fleet',
            moduleId: 'test-scheduler',
            register(reg) {
              reg.registerInit({
                deps: { s: coreServices.scheduler },
                async init({ s }) {
                  scheduler = s;
                },
              });
            },
          }),
        ],
      });
      const alice = mockCredentials.user.header('user:default/alice');
      const bob = mockCredentials.user.header('user:default/bob');

      // The catalog has stitched who owns the component and who is in which group (the policy
      // reads groups from the catalog when it decides).
      const stitched = async (ref: string, relation: string) => {
        const res = await request(server)
          .get(`/api/catalog/entities/by-name/${ref}`)
          .set('Authorization', mockCredentials.service.header());
        return (res.body.relations ?? []).some((r: any) => r.type === relation);
      };
      for (let i = 0; i < 240; i++) {
        const ready = await Promise.all([
          stitched('user/default/alice', 'memberOf'),
          stitched('user/default/bob', 'memberOf'),
          stitched('component/default/orders', 'ownedBy'),
        ]);
        if (ready.every(Boolean)) break;
        await new Promise(r => setTimeout(r, 250));
      }
      await request(server)
        .post('/api/fleet/health/run')
        .set('Authorization', alice)
        .expect(200);
      // Both clusters are prod; east is kept to team-a.
      for (const [name, labels] of [
        ['east', { env: 'prod', 'cnp.io/allowed-groups': 'team-a' }],
        ['west', { env: 'prod' }],
      ] as const) {
        await request(server)
          .patch(`/api/fleet/clusters/${name}`)
          .set('Authorization', alice)
          .send({ labels })
          .expect(200);
      }

      // Bob's team owns the component; he places it on every prod cluster.
      const registered = await request(server)
        .post('/api/fleet/applications')
        .set('Authorization', bob)
        .send({
          entityRef,
          spec: { image: 'orders:1', replicas: 1 },
          placement: { clusterSelector: { matchLabels: { env: 'prod' } } },
        })
        .expect(201);
      expect(registered.body.placementRefused).toEqual([]);

      const clustersOf = async () =>
        (
          await knex('fleet_deployments')
            .where({ application_id: registered.body.id })
            .orderBy('cluster')
        ).map((d: any) => d.cluster);
      const refusedOf = async () =>
        (
          await knex('fleet_placement_grants')
            .where({ application_id: registered.body.id })
            .first()
        )?.refused;
      /** Runs the reconcile and waits until what it writes says `done`. */
      const reconcileUntil = async (
        done: (clusters: string[], refused: unknown) => boolean,
      ) => {
        await scheduler!.triggerTask('fleet-reconcile');
        for (let i = 0; i < 200; i++) {
          if (done(await clustersOf(), await refusedOf())) return;
          await new Promise(r => setTimeout(r, 100));
        }
        throw new Error(
          `the reconcile left ${JSON.stringify([
            await clustersOf(),
            await refusedOf(),
          ])}`,
        );
      };
      await reconcileUntil(
        (clusters, refused) => clusters.length > 0 && !!refused,
      );

      expect(await clustersOf()).toEqual(['west']);
      const shown = await request(server)
        .get(`/api/fleet/applications/${registered.body.id}`)
        .set('Authorization', bob)
        .expect(200);
      expect(shown.body.placementRefused).toEqual([
        {
          cluster: 'east',
          reason: 'Not allowed: fleet.cluster.deploy for user:default/bob',
        },
      ]);
      // The component's card hears of it at once (it subscribes to the component's channel).
      for (let i = 0; i < 50 && placementSignals().length === 0; i++) {
        await new Promise(r => setTimeout(r, 100));
      }
      expect(placementSignals()).toEqual([
        {
          subject: 'east',
          from: null,
          to: 'REFUSED',
          reason: 'Not allowed: fleet.cluster.deploy for user:default/bob',
        },
      ]);

      // An admin opens east to team-b: the next run places there and the refusal goes.
      await request(server)
        .patch('/api/fleet/clusters/east')
        .set('Authorization', alice)
        .send({
          labels: {
            env: 'prod',
            'allowed-groups.cnp.io/team-a': 'true',
            'allowed-groups.cnp.io/team-b': 'true',
          },
        })
        .expect(200);
      await reconcileUntil(
        (clusters, refused) => clusters.length > 1 && !refused,
      );
      expect(await clustersOf()).toEqual(['east', 'west']);
      // Revalidating the earlier answer gets the new one: the refusal went without a new
      // version (the ETag If-Match compares), and a 304 would keep it on the screen.
      const after = await request(server)
        .get(`/api/fleet/applications/${registered.body.id}`)
        .set('Authorization', bob)
        .set('If-None-Match', shown.headers.etag)
        .expect(200);
      expect(after.headers.etag).toBe(shown.headers.etag);
      expect(after.body.placementRefused).toEqual([]);
      for (let i = 0; i < 50 && placementSignals().length < 2; i++) {
        await new Promise(r => setTimeout(r, 100));
      }
      expect(placementSignals()[1]).toEqual({
        subject: 'east',
        from: 'REFUSED',
        to: 'ALLOWED',
        reason: null,
      });
      fs.rmSync(dir, { recursive: true, force: true });
    });
  },
);
