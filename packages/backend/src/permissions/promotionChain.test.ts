import {
  coreServices,
  createBackendModule,
  createServiceFactory,
  type BackendFeature,
  type SchedulerService,
} from '@backstage/backend-plugin-api';
import { mockCredentials } from '@backstage/backend-test-utils';
import notificationsPlugin from '@backstage/plugin-notifications-backend';
import { createTestDatabases, useSimulator } from '@cnp/fleet-harness';
import { fleetClockServiceRef } from '@cnp/plugin-fleet-node';
import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { stringify } from 'yaml';
import { startChainBackend } from './__testUtils__/chainBackend';

jest.setTimeout(180_000);

/*
 * Governed promotion under the real permission chain: the permission backend with the app's
 * policy, the catalog reading the org (who is in release-managers), Fleet on both databases and
 * the kube simulator. Staging verifies a version before prod may take it, after a soak; prod
 * waits for an approval by a release manager other than the author; a rejection applies nothing;
 * freeze windows hold a release until they close, or until an approval overrides them; an
 * automatic rollback in staging takes the verification back. The time the soaks and the windows
 * see is Fleet's clock service, moved by the test: nothing sleeps for it.
 */

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['stg-a', 'prd-a'], readyDelayMs: 50 });

const MINUTE = 60_000;
const T0 = Date.now();
let offsetMs = 0;
const clock: BackendFeature = createServiceFactory({
  service: fleetClockServiceRef,
  deps: {},
  factory: () => ({ now: () => new Date(Date.now() + offsetMs) }),
});

// The test backend's scheduler runs a task when told to: the release task is run by hand.
let scheduler: SchedulerService | undefined;
const capturedScheduler = createBackendModule({
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
});

const image = (v: string) => `ghcr.io/acme/payments:${v}`;
const managers = 'group:default/release-managers';

const entities = [
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Group',
    metadata: { name: 'team-a' },
    spec: { type: 'team', children: [], members: ['alice', 'bob'] },
  },
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Group',
    metadata: { name: 'release-managers' },
    spec: { type: 'team', children: [], members: ['alice', 'carol', 'dave'] },
  },
  ...['alice', 'bob', 'carol', 'dave'].map(name => ({
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'User',
    metadata: { name },
    spec: { memberOf: [] },
  })),
  {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: { name: 'payments' },
    spec: { type: 'service', lifecycle: 'production', owner: 'group:team-a' },
  },
];

const as = (user: string) =>
  mockCredentials.user.header(`user:default/${user}`);

async function waitUntil<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < 300; i++) {
    last = await read();
    if (done(last)) return last;
    await new Promise(r => setTimeout(r, 100));
  }
  throw new Error(`${what}: still ${JSON.stringify(last)}`);
}

describe.each(databases.eachSupportedId())(
  'governed promotion under the real permission chain (%s)',
  databaseId => {
    let server: Server;
    let knex: Awaited<ReturnType<typeof startChainBackend>>['knex'];
    const entityRef = 'component:default/payments';

    beforeAll(async () => {
      offsetMs = 0;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-promotion-'));
      const file = path.join(dir, 'entities.yaml');
      fs.writeFileSync(file, entities.map(e => stringify(e)).join('---\n'));
      ({ server, knex } = await startChainBackend({
        databases,
        databaseId,
        entitiesFile: file,
        allowKinds: ['Component', 'Group', 'User'],
        fleet: {
          discovery: { kubeconfigDir: sim.kubeconfigDir },
          deploy: {
            pollInterval: { milliseconds: 50 },
            progressDeadline: { seconds: 2 },
          },
          reconcile: { interval: { minutes: 10 }, watch: false },
          permissions: { clusterAdmins: ['group:default/team-a'] },
          release: {
            freezeWindows: [
              {
                name: 'friday-evening',
                clusterSelector: 'env=prod',
                start: new Date(T0 + 120 * MINUTE).toISOString(),
                duration: '2h',
              },
              {
                name: 'year-end',
                clusterSelector: 'env=prod',
                start: new Date(T0 + 360 * MINUTE).toISOString(),
                duration: '1h',
              },
            ],
          },
        },
        features: [clock, capturedScheduler, notificationsPlugin],
      }));
      // The catalog has stitched the org: who is in which group, who owns payments.
      const stitched = async (ref: string, relation: string) => {
        const res = await request(server)
          .get(`/api/catalog/entities/by-name/${ref}`)
          .set('Authorization', mockCredentials.service.header());
        return (res.body.relations ?? []).some((r: any) => r.type === relation);
      };
      await waitUntil(
        'the catalog reads the org',
        () =>
          Promise.all([
            ...['alice', 'carol', 'dave'].map(u =>
              stitched(`user/default/${u}`, 'memberOf'),
            ),
            stitched('component/default/payments', 'ownedBy'),
          ]),
        ready => ready.every(Boolean),
      );
    });

    const release = (user: string, id: string, body: object) =>
      request(server)
        .post(`/api/fleet/applications/${id}/releases`)
        .set('Authorization', as(user))
        .send(body);
    const decide = (
      user: string,
      id: string,
      action: 'approve' | 'reject',
      body: object = {},
    ) =>
      request(server)
        .post(`/api/fleet/releases/${id}/${action}`)
        .set('Authorization', as(user))
        .send(body);
    const statusOf = async (id: string) =>
      (
        await request(server)
          .get(`/api/fleet/releases/${id}`)
          .set('Authorization', as('alice'))
          .expect(200)
      ).body;
    const completed = (id: string) =>
      waitUntil(
        `release ${id} completes`,
        () => statusOf(id),
        r => r.status === 'COMPLETED',
      );
    const prodImage = async () =>
      (
        await request(server)
          .get(`/api/fleet/deployments?entityRef=${entityRef}&cluster=prd-a`)
          .set('Authorization', as('alice'))
          .expect(200)
      ).body.items[0];
    const eventsOf = async (id: string) =>
      (
        await knex('fleet_events')
          .where({ subject_kind: 'release', subject: id })
          .orderBy('id')
      ).map((e: any) => ({
        actor: e.actor,
        reason: e.reason,
        message: e.message,
      }));
    const notified = async (user: string): Promise<string[]> =>
      (
        await request(server)
          .get('/api/notifications/notifications')
          .set('Authorization', as(user))
          .expect(200)
      ).body.notifications.map((n: any) => n.payload.title);
    /** A release of `version` to staging, completed there (staging requires nothing). */
    const toStaging = async (id: string, version: string) => {
      const res = await release('alice', id, {
        stage: 'staging',
        image: image(version),
      }).expect(201);
      await completed(res.body.id);
    };

    it("promotes to prod only what staging verified, after its soak, on another manager's approval, and never in a freeze window unless overridden", async () => {
      await request(server)
        .post('/api/fleet/health/run')
        .set('Authorization', as('alice'))
        .expect(200);
      await request(server)
        .patch('/api/fleet/clusters/prd-a')
        .set('Authorization', as('alice'))
        .send({ labels: { env: 'prod' } })
        .expect(200);
      const { body: app } = await request(server)
        .post('/api/fleet/applications')
        .set('Authorization', as('alice'))
        .send({ entityRef, spec: { image: image('1.0.0'), replicas: 1 } })
        .expect(201);
      for (const cluster of ['stg-a', 'prd-a']) {
        await request(server)
          .post('/api/fleet/deployments')
          .set('Authorization', as('alice'))
          .send({ entityRef, cluster, image: image('1.0.0') })
          .expect(201);
      }
      await waitUntil(
        'prod runs 1.0.0',
        prodImage,
        d => d?.status === 'DEPLOYED',
      );
      await request(server)
        .patch(`/api/fleet/applications/${app.id}`)
        .set('Authorization', as('alice'))
        .send({
          spec: {
            stages: [
              { name: 'staging', clusters: ['stg-a'] },
              {
                name: 'prod',
                clusterSelector: 'env=prod',
                requires: {
                  stage: 'staging',
                  soak: '30m',
                  approvals: { groups: [managers], count: 1 },
                },
              },
            ],
          },
        })
        .expect(200);
      // From now on prod takes versions by releases only: a deploy by hand is refused.
      const byHand = await request(server)
        .post('/api/fleet/deployments')
        .set('Authorization', as('alice'))
        .send({ entityRef, cluster: 'prd-a', image: image('1.1.0') })
        .expect(409);
      expect(byHand.body.error.message).toBe(
        `Cluster 'prd-a' is in stage 'prod' of '${entityRef}', which takes a version only by a release to the stage: release to stage prod instead of deploying`,
      );

      // Before staging verified anything, prod is refused, naming staging; so is a release that
      // names no stage but goes to prod's clusters.
      const early = await release('alice', app.id, {
        stage: 'prod',
        image: image('1.1.0'),
      }).expect(409);
      expect(early.body.error.message).toMatch(
        /^stage prod requires a version staging verified: /,
      );
      await release('alice', app.id, {
        clusters: ['prd-a'],
        image: image('1.1.0'),
      }).expect(409);

      // Staging verifies 1.1.0; prod still waits for the soak, then takes it and waits for an
      // approval.
      await toStaging(app.id, '1.1.0');
      const unsoaked = await release('alice', app.id, { stage: 'prod' }).expect(
        409,
      );
      expect(unsoaked.body.error.message).toContain('soaked until');
      offsetMs = 40 * MINUTE;
      const waiting = await release('alice', app.id, { stage: 'prod' }).expect(
        201,
      );
      expect(waiting.body).toMatchObject({
        status: 'WAITING_FOR_APPROVAL',
        stage: 'prod',
        image: image('1.1.0'),
        targets: [],
        gate: { approvals: { groups: [managers], count: 1 }, decisions: [] },
      });
      const id = waiting.body.id;

      // The author is a release manager, and still may not approve; bob is not one.
      const own = await decide('alice', id, 'approve').expect(403);
      expect(own.body.error.message).toBe(
        `You started release '${id}': someone else must approve it`,
      );
      const outsider = await decide('bob', id, 'approve').expect(403);
      expect(outsider.body.error.message).toBe(
        `Only members of ${managers} may approve release '${id}'`,
      );
      expect((await prodImage()).image).toBe(image('1.0.0'));

      // The release managers hear that it waits for them; its author does not need to.
      await waitUntil(
        'the release managers are told',
        () => notified('carol'),
        titles =>
          titles.includes(
            'Fleet: a release of payments waits for your approval',
          ),
      );
      expect(await notified('alice')).not.toContain(
        'Fleet: a release of payments waits for your approval',
      );

      // Carol approves: it proceeds.
      const approved = await decide('carol', id, 'approve', {
        comment: 'staging looks good',
      }).expect(200);
      expect(approved.body.status).not.toMatch(/^WAITING/);
      await completed(id);
      expect((await prodImage()).image).toBe(image('1.1.0'));
      expect(await eventsOf(id)).toEqual(
        expect.arrayContaining([
          {
            actor: 'user:default/carol',
            reason: 'APPROVED',
            message: 'Approved by user:default/carol: "staging looks good"',
          },
        ]),
      );
      await decide('dave', id, 'approve').expect(409);
      await waitUntil(
        'the author is told',
        () => notified('alice'),
        titles =>
          titles.includes('Fleet: carol approved your release of payments'),
      );

      // A rejection ends the release REJECTED, and nothing reaches prod.
      await toStaging(app.id, '1.2.0');
      offsetMs = 80 * MINUTE;
      const rejected = await release('alice', app.id, { stage: 'prod' }).expect(
        201,
      );
      const rejection = await decide('dave', rejected.body.id, 'reject', {
        comment: 'not before the audit',
      }).expect(200);
      expect(rejection.body).toMatchObject({
        status: 'REJECTED',
        targets: [],
        gate: {
          decisions: [
            {
              actor: 'user:default/dave',
              decision: 'REJECTED',
              comment: 'not before the audit',
            },
          ],
        },
      });
      await decide('carol', rejected.body.id, 'approve').expect(409);
      await waitUntil(
        'the author hears of the rejection',
        () => notified('alice'),
        titles =>
          titles.includes('Fleet: dave rejected your release of payments'),
      );
      expect((await prodImage()).image).toBe(image('1.1.0'));
      expect((await prodImage()).revision).toBe(2);

      // Inside the friday-evening window: approved, the release waits for the window, and
      // starts by itself once it closes.
      offsetMs = 150 * MINUTE;
      const frozen = await release('alice', app.id, { stage: 'prod' }).expect(
        201,
      );
      const held = await decide('carol', frozen.body.id, 'approve').expect(200);
      expect(held.body).toMatchObject({
        status: 'WAITING_FOR_WINDOW',
        gate: { window: { name: 'friday-evening', clusters: ['prd-a'] } },
      });
      // A run of the release task (awaited) while the window is open keeps it waiting.
      await scheduler!.triggerTask('fleet-releases');
      expect((await statusOf(frozen.body.id)).status).toBe(
        'WAITING_FOR_WINDOW',
      );
      expect((await prodImage()).image).toBe(image('1.1.0'));
      offsetMs = 245 * MINUTE;
      await scheduler!.triggerTask('fleet-releases');
      await completed(frozen.body.id);
      expect((await prodImage()).image).toBe(image('1.2.0'));
      expect((await eventsOf(frozen.body.id)).map(e => e.reason)).toContain(
        'WINDOW_CLOSED',
      );

      // Inside the year-end window, an approval that overrides it starts the release at once,
      // and the events say who overrode it.
      await toStaging(app.id, '1.3.0');
      offsetMs = 370 * MINUTE;
      const urgent = await release('alice', app.id, { stage: 'prod' }).expect(
        201,
      );
      const overridden = await decide('dave', urgent.body.id, 'approve', {
        comment: 'security fix',
        overrideFreeze: true,
      }).expect(200);
      expect(overridden.body.status).not.toMatch(/^WAITING/);
      await completed(urgent.body.id);
      expect((await prodImage()).image).toBe(image('1.3.0'));
      expect(await eventsOf(urgent.body.id)).toEqual(
        expect.arrayContaining([
          {
            actor: 'user:default/dave',
            reason: 'FREEZE_OVERRIDDEN',
            message:
              "user:default/dave overrode freeze window 'year-end' on prd-a",
          },
        ]),
      );

      // 1.4.0 fails in staging and is rolled back automatically: staging runs 1.3.0 again, but
      // by a rollback, not a release, so it verified nothing and prod takes nothing.
      const broken = await release('alice', app.id, {
        stage: 'staging',
        image: image('1.4.0-broken'),
      }).expect(201);
      await waitUntil(
        'staging is rolled back',
        async () =>
          (
            await request(server)
              .get(
                `/api/fleet/deployments?entityRef=${entityRef}&cluster=stg-a`,
              )
              .set('Authorization', as('alice'))
          ).body.items[0],
        d => d.status === 'DEPLOYED' && d.image === image('1.3.0'),
      );
      expect((await statusOf(broken.body.id)).status).toBe('FAILED');
      offsetMs = 500 * MINUTE;
      const unverified = await release('alice', app.id, {
        stage: 'prod',
      }).expect(409);
      expect(unverified.body.error.message).toMatch(
        /^stage prod requires a version staging verified: /,
      );
    });
  },
);
