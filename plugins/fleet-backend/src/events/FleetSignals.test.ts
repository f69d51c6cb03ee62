import {
  coreServices,
  createBackendModule,
} from '@backstage/backend-plugin-api';
import {
  eventsServiceFactory,
  eventsServiceRef,
  type EventParams,
} from '@backstage/plugin-events-node';
import type { SignalPayload } from '@backstage/plugin-signals-node';
import {
  fleetSignalChannels,
  type FleetSignalMessage,
} from '@cnp/plugin-fleet-common';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { FleetSignals } from './FleetSignals';
import request from 'supertest';
import {
  eventually,
  startListenerBackend,
} from '../__testUtils__/listenerBackend';

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['east', 'west', 'north'],
  readyDelayMs: 50,
});

/**
 * What Backstage's signals service published, read where the signals backend reads it: the
 * `signals` topic of the real events service.
 */
function signalsHeard() {
  const heard: Array<SignalPayload<FleetSignalMessage>> = [];
  const module = createBackendModule({
    pluginId: 'fleet',
    moduleId: 'test-signals-listener',
    register(env) {
      env.registerInit({
        deps: { events: eventsServiceRef, lifecycle: coreServices.lifecycle },
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
  });
  const on = (channel: string) =>
    heard.filter(s => s.channel === channel).map(s => s.message);
  return { module, heard, on };
}

describe.each(databases.eachSupportedId())(
  'Fleet signals through the signals service (%s)',
  databaseId => {
    it('publishes each committed change once, on the channels of the cluster, the fleet and the component', async () => {
      const knex = await databases.init(databaseId);
      const signals = signalsHeard();
      const { server } = await startListenerBackend({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        components: ['payments'],
        fleet: {},
        features: [eventsServiceFactory, signals.module],
      });
      const cycle = () =>
        request(server).post('/api/fleet/health/run').expect(200);
      await cycle();
      const entityRef = 'component:default/payments';
      const created = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'east', image: 'payments:1.0.0' })
        .expect(201);
      const id = created.body.id;
      const own = fleetSignalChannels.deploymentsOf(entityRef);
      await eventually(
        'DEPLOYED on the component’s channel',
        async () => signals.on(own).flatMap(m => m.changes),
        changes => changes.some(c => c.to === 'DEPLOYED'),
      );
      expect(signals.on(own)[0]).toEqual({
        kind: 'deployment',
        entityRef,
        changes: [
          {
            subject: id,
            from: null,
            to: 'PENDING',
            reason: null,
            cluster: 'east',
          },
        ],
      });
      // Every signal goes to every signed-in user: it only names what changed.
      expect(signals.heard.every(s => s.recipients.type === 'broadcast')).toBe(
        true,
      );

      signals.heard.length = 0;
      sim.setFault('east', { mode: 'down' });
      await cycle();
      await cycle();
      await eventually(
        'the cascade on the component’s channel',
        async () => signals.on(own),
        messages => messages.length > 0,
      );
      expect(signals.on(fleetSignalChannels.clusters)).toEqual([
        {
          kind: 'cluster',
          changes: [
            {
              subject: 'east',
              from: 'ONLINE',
              to: 'OFFLINE',
              reason: 'FAILURE_THRESHOLD_REACHED',
            },
          ],
        },
      ]);
      expect(signals.on(own)).toEqual([
        {
          kind: 'deployment',
          entityRef,
          changes: [
            {
              subject: id,
              from: 'DEPLOYED',
              to: 'DEGRADED',
              reason: 'CLUSTER_OFFLINE',
              cluster: 'east',
            },
          ],
        },
      ]);
      expect(signals.on(fleetSignalChannels.deployments)).toEqual(
        signals.on(own).map(({ entityRef: _, ...m }) => m),
      );

      // A cycle that changes nothing publishes nothing.
      signals.heard.length = 0;
      await cycle();
      expect(signals.heard).toEqual([]);
    });
  },
);

describe('FleetSignals.releaseProgressed', () => {
  it("publishes on the component's release channel, so its panel shows a new judgment", async () => {
    const publish = jest.fn(async () => {});
    const entityRef = 'component:default/payments';
    await FleetSignals.create({ signals: { publish } }).releaseProgressed({
      releaseId: 'r-1',
      entityRef,
      phase: 'PROGRESSING',
    });
    expect(publish).toHaveBeenCalledTimes(1);
    expect(publish).toHaveBeenCalledWith({
      recipients: { type: 'broadcast' },
      channel: fleetSignalChannels.releasesOf(entityRef),
      message: {
        kind: 'release',
        entityRef,
        changes: [
          {
            subject: 'r-1',
            from: 'PROGRESSING',
            to: 'PROGRESSING',
            reason: 'PROGRESS',
          },
        ],
      },
    });
  });
});

describe('FleetSignals: release status changes', () => {
  it("publishes a release's status change on the fleet's release channel and its component's", async () => {
    const publish = jest.fn(async () => {});
    const entityRef = 'component:default/payments';
    await FleetSignals.create({ signals: { publish } }).eventsCommitted([
      {
        subjectKind: 'release',
        subject: 'r-1',
        actor: 'user:default/guest',
        from: 'PROGRESSING',
        to: 'PAUSED',
        reason: 'PAUSED_BY_USER',
        createdAt: new Date().toISOString(),
        entityRef,
      },
    ]);
    const change = {
      subject: 'r-1',
      from: 'PROGRESSING',
      to: 'PAUSED',
      reason: 'PAUSED_BY_USER',
    };
    expect(publish).toHaveBeenCalledTimes(2);
    expect(publish).toHaveBeenCalledWith({
      recipients: { type: 'broadcast' },
      channel: fleetSignalChannels.releases,
      message: { kind: 'release', changes: [change] },
    });
    expect(publish).toHaveBeenCalledWith({
      recipients: { type: 'broadcast' },
      channel: fleetSignalChannels.releasesOf(entityRef),
      message: { kind: 'release', entityRef, changes: [change] },
    });
  });
});
