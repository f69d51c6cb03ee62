import notificationsPlugin from '@backstage/plugin-notifications-backend';
import { mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import {
  eventually,
  notificationsOf,
  startListenerBackend,
} from '../__testUtils__/listenerBackend';
import { entityPath, FleetNotifier } from './FleetNotifier';
import type { CommittedEvent } from './FleetListener';
import { mockServices } from '@backstage/backend-test-utils';

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['east', 'west', 'north'],
  readyDelayMs: 50,
});

type Listed = { payload: { title: string; link?: string; severity: string } };

describe.each(databases.eachSupportedId())(
  'Fleet notifications through the notifications backend (%s)',
  databaseId => {
    async function start(fleet: Record<string, unknown> = {}) {
      const knex = await databases.init(databaseId);
      const started = await startListenerBackend({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        components: ['payments'],
        fleet,
        features: [notificationsPlugin],
      });
      const { server } = started;
      const listed = async (user: string): Promise<Listed[]> =>
        (
          await request(server)
            .get('/api/notifications/notifications')
            .set('Authorization', notificationsOf(user))
            .expect(200)
        ).body.notifications;
      const titles = async (user: string) =>
        (await listed(user)).map(n => n.payload.title).sort();
      const cycle = () =>
        request(server).post('/api/fleet/health/run').expect(200);
      return { ...started, listed, titles, cycle };
    }

    const entityRef = 'component:default/payments';

    it('tells the admins once that a cluster went OFFLINE, and the owners that their deployment DEGRADED', async () => {
      const { server, listed, titles, cycle } = await start();
      await cycle();
      const deployed = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'east', image: 'payments:1.0.0' })
        .expect(201);
      await eventually(
        'the deployment DEPLOYED',
        async () =>
          (
            await request(server).get(
              `/api/fleet/deployments/${deployed.body.id}`,
            )
          ).body.status,
        status => status === 'DEPLOYED',
      );

      sim.setFault('east', { mode: 'down' });
      await cycle(); // grace period: no transition, nobody told
      await cycle(); // confirmed: OFFLINE, the deployment DEGRADED

      const bob = await eventually(
        "the admins' notification",
        () => listed('bob'),
        n => n.length >= 1,
      );
      expect(bob).toEqual([
        expect.objectContaining({
          payload: expect.objectContaining({
            title: 'Fleet: cluster east is offline',
            link: '/catalog/default/resource/east',
            severity: 'high',
            topic: 'fleet',
          }),
        }),
      ]);
      const alice = await eventually(
        "the owners' notification",
        () => listed('alice'),
        n => n.length >= 1,
      );
      expect(alice).toEqual([
        expect.objectContaining({
          payload: expect.objectContaining({
            title: 'Fleet: payments is degraded on east',
            link: '/catalog/default/component/payments',
            description: expect.stringMatching(
              /^Deployed → Degraded: Cluster offline: /,
            ),
            // A degradation is a warning, never the check mark of `normal`.
            severity: 'high',
          }),
        }),
      ]);

      // Still down: no transition, no new notification. Then another cluster goes: once its
      // notification is there, the admins have exactly two.
      await cycle();
      sim.setFault('west', { mode: 'down' });
      await cycle();
      await cycle();
      await eventually(
        "west's notification",
        () => titles('bob'),
        t => t.includes('Fleet: cluster west is offline'),
      );
      expect(await titles('bob')).toEqual([
        'Fleet: cluster east is offline',
        'Fleet: cluster west is offline',
      ]);
      // Nothing of payments ran on west; the owners heard of east only. Nobody else heard.
      expect(await titles('alice')).toEqual([
        'Fleet: payments is degraded on east',
      ]);
      expect(await listed('carol')).toEqual([]);
    });

    it('tells the admins of a mass outage once, not of each cluster', async () => {
      const { titles, cycle } = await start();
      await cycle();
      for (const name of ['east', 'west', 'north'])
        sim.setFault(name, { mode: 'down' });
      await cycle();
      await cycle(); // all three OFFLINE at once: the guard rises
      await cycle(); // still up: not raised again
      for (const name of ['east', 'west', 'north'])
        sim.setFault(name, { mode: 'ok' });
      await cycle(); // back ONLINE, the guard lifted
      sim.setFault('north', { mode: 'down' });
      await cycle();
      await cycle(); // one cluster alone: its own notification
      await eventually(
        "north's notification",
        () => titles('bob'),
        t => t.includes('Fleet: cluster north is offline'),
      );
      expect(await titles('bob')).toEqual([
        'Fleet: cluster north is offline',
        'Fleet: mass outage suspected, 3 clusters offline',
      ]);
      expect(await titles('alice')).toEqual([]);
    });

    it("a guest's notification for an unreadable kubeconfig carries no path: the owners of a deploy that failed for it read what the API tells them", async () => {
      const dir = realpathSync(
        mkdtempSync(path.join(os.tmpdir(), 'fleet-notify-')),
      );
      const missing = path.join(dir, 'prod-admin.yaml');
      const { server, listed } = await start({
        discovery: {
          kubeconfigDir: sim.kubeconfigDir,
          allowedKubeconfigDirs: [dir],
        },
      });
      await request(server)
        .post('/api/fleet/clusters')
        .send({
          name: 'prod',
          endpoint: 'https://prod.example:6443',
          kubeconfigRef: missing,
        })
        .expect(201);
      await request(server).post('/api/fleet/health/run').expect(200);
      const deployed = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'prod', image: 'payments:1.0.0' })
        .expect(201);
      expect(deployed.body.status).toBe('FAILED');
      const alice = await eventually(
        "the owners' notification",
        () => listed('alice'),
        n =>
          n.some(x => x.payload.title === 'Fleet: payments is failed on prod'),
      );
      const text = JSON.stringify(alice);
      expect(text).not.toContain(dir);
      expect(text).not.toContain('prod-admin');
      expect(text).not.toMatch(/\bE(NOENT|ACCES)\b/);
      expect(text).toContain('the details are shown to cluster admins');
    });

    it('tells the owners when a revision fails and is rolled back automatically, and of a rollback by hand all but the one who did it', async () => {
      const { server, titles, listed } = await start({
        deploy: {
          pollInterval: { milliseconds: 100 },
          progressDeadline: { seconds: 2 },
        },
      });
      await request(server).post('/api/fleet/health/run').expect(200);
      const first = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'west', image: 'payments:1.0.0' })
        .expect(201);
      const id = first.body.id;
      const statusOf = async () =>
        (await request(server).get(`/api/fleet/deployments/${id}`)).body;
      await eventually('DEPLOYED', statusOf, d => d.status === 'DEPLOYED');

      sim.setReadiness('west', { neverReady: true });
      await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'west', image: 'payments:2.0.0' })
        .expect(201);
      await eventually(
        'the failure and the rollback',
        () => titles('alice'),
        t => t.length >= 2,
      );
      expect(await titles('alice')).toEqual([
        'Fleet: payments is failed on west',
        'Fleet: payments was rolled back on west',
      ]);
      const failed = (await listed('alice')).find(n =>
        n.payload.title.includes('failed'),
      );
      expect(failed?.payload).toMatchObject({
        severity: 'critical',
        link: '/catalog/default/component/payments',
      });

      // alice rolls back by hand: the other owners hear of it, she does not.
      sim.setReadiness('west', { neverReady: false, readyDelayMs: 50 });
      await eventually('the rollout ended', statusOf, d =>
        ['DEPLOYED', 'FAILED'].includes(d.status),
      );
      await request(server)
        .post(`/api/fleet/deployments/${id}/rollback`)
        .set('Authorization', notificationsOf('alice'))
        .send({ toRevision: 1 })
        .expect(201);
      const dave = await eventually(
        "dave's notification of alice's rollback",
        () => listed('dave'),
        n =>
          n.some(x =>
            (x.payload as any).description?.startsWith('Rolled back by alice'),
          ),
      );
      // The same news about the same deployment updated his notification: no new one.
      expect(dave.map(n => n.payload.title).sort()).toEqual([
        'Fleet: payments is failed on west',
        'Fleet: payments was rolled back on west',
      ]);
      expect(await titles('alice')).toEqual([
        'Fleet: payments is failed on west',
        'Fleet: payments was rolled back on west',
      ]);
    });
  },
);

describe('FleetNotifier', () => {
  const sent: any[] = [];
  const notifier = FleetNotifier.create({
    notifications: {
      send: async options => {
        sent.push(options);
      },
    },
    logger: mockServices.logger.mock(),
    clusterAdmins: ['group:default/admins'],
    clusterNamespace: 'default',
  });
  const event = (e: Partial<CommittedEvent>): CommittedEvent => ({
    subjectKind: 'deployment',
    subject: 'd-1',
    actor: 'fleet-reconcile',
    to: 'DEPLOYED',
    createdAt: new Date().toISOString(),
    entityRef: 'component:default/payments',
    cluster: 'east',
    ...e,
  });
  beforeEach(() => {
    sent.length = 0;
  });

  it('tells the owners of a prune and of a release rolled back, each under a scope of its own', async () => {
    await notifier.eventsCommitted([
      event({ from: 'DEPLOYED', to: 'REMOVED', reason: 'PRUNED' }),
      event({
        subjectKind: 'release',
        subject: 'r-1',
        from: 'ABORTING',
        to: 'ROLLED_BACK',
        reason: 'ANALYSIS_FAILED',
        cluster: undefined,
        actor: 'fleet-release',
      }),
    ]);
    expect(sent).toEqual([
      {
        recipients: { type: 'entity', entityRef: 'component:default/payments' },
        payload: expect.objectContaining({
          title: 'Fleet: payments was pruned on east',
          scope: 'fleet:deployment:d-1:PRUNED',
          link: '/catalog/default/component/payments',
        }),
      },
      {
        recipients: { type: 'entity', entityRef: 'component:default/payments' },
        payload: expect.objectContaining({
          title: 'Fleet: a release of payments was rolled back',
          description: 'The release was rolled back: Analysis failed',
          // Every release of the component shares it: a newer one's news replaces this.
          scope: 'fleet:releases:component:default/payments',
        }),
      },
    ]);
  });

  it("a guest's notification for an unreadable kubeconfig carries no path and no system error", async () => {
    const reason =
      "kubeconfig file '/srv/fleet/kubeconfigs/prod-admin.yaml' is not readable (ENOENT)";
    await notifier.eventsCommitted([
      event({
        from: 'PENDING',
        to: 'FAILED',
        reason: 'CLUSTER_NOT_CONFIGURED',
        message: reason,
      }),
      event({
        subjectKind: 'release',
        subject: 'r-2',
        from: 'ABORTING',
        to: 'ROLLED_BACK',
        reason: 'STEP_FAILED',
        message: `east: cannot read what east serves: ${reason}`,
        cluster: undefined,
        actor: 'fleet-release',
      }),
    ]);
    await notifier.healthCycleFinished({
      summary: { massOutage: { active: false, clusters: [] } } as any,
      transitions: [
        {
          cluster: 'east',
          from: 'ONLINE',
          to: 'OFFLINE',
          reason: `NOT_PROBEABLE: ${reason}`,
        },
      ],
      massOutageRaised: false,
      probes: [],
    });
    expect(sent).toHaveLength(3);
    const text = JSON.stringify(sent);
    expect(text).not.toContain('/srv/fleet');
    expect(text).not.toContain('prod-admin');
    expect(text).not.toContain('ENOENT');
    expect(sent[0].payload.description).toBe(
      'Pending → Failed: Cluster not configured: the details are shown to cluster admins',
    );
  });

  it('says nothing of what needs nobody', async () => {
    await notifier.eventsCommitted([
      event({ from: 'PENDING', to: 'PROGRESSING' }),
      event({ from: 'PROGRESSING', to: 'DEPLOYED' }),
      event({ from: 'DEGRADED', to: 'DEPLOYED' }),
      event({ from: 'DEPLOYED', to: 'REMOVED', reason: 'UNDEPLOYED' }),
      event({
        to: 'PENDING',
        reason: 'REVISION_ROLLBACK',
        actor: 'fleet-release',
      }),
      event({ subjectKind: 'release', subject: 'r', to: 'PROGRESSING' }),
      event({ subjectKind: 'cluster', subject: 'east', to: 'OFFLINE' }),
      event({ to: 'FAILED', from: 'PENDING', entityRef: undefined }),
    ]);
    await notifier.healthCycleFinished({
      summary: {
        massOutage: { active: false, clusters: [] },
      } as any,
      transitions: [
        { cluster: 'east', from: 'OFFLINE', to: 'ONLINE', reason: 'OK' },
        { cluster: 'west', from: 'UNKNOWN', to: 'ONLINE', reason: 'OK' },
      ],
      massOutageRaised: false,
      probes: [],
    });
    expect(sent).toEqual([]);
  });

  it('warns of a failed send once a minute, not once per notification', async () => {
    const logger = mockServices.logger.mock();
    const failing = FleetNotifier.create({
      notifications: {
        send: async () => {
          throw new Error('Request failed with status 404');
        },
      },
      logger,
      clusterAdmins: [],
      clusterNamespace: 'default',
    });
    const failed = event({ from: 'PROGRESSING', to: 'FAILED' });
    await failing.eventsCommitted([failed, failed, failed]);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledWith(
      'Could not send the Fleet notification "Fleet: payments is failed on east"',
      expect.objectContaining({ message: 'Request failed with status 404' }),
    );
    expect(logger.debug).toHaveBeenCalledTimes(2);
  });

  it('links to entity pages', () => {
    expect(entityPath('component:default/payments')).toBe(
      '/catalog/default/component/payments',
    );
    expect(entityPath('Resource:prod/eu west')).toBe(
      '/catalog/prod/resource/eu%20west',
    );
  });
});
