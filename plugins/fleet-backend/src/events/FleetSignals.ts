import type { SignalsService } from '@backstage/plugin-signals-node';
import {
  fleetSignalChannels,
  type FleetSignalChange,
  type FleetSignalMessage,
} from '@cnp/plugin-fleet-common';
import type {
  CommittedEvent,
  FleetListener,
  PlacementRefusalsChange,
  DeploymentProgressChange,
  ReleaseProgressChange,
} from './FleetListener';

/** Changes per message at most: a cascade over a large cluster is sent in several. */
const MAX_CHANGES = 200;

/**
 * Publishes Backstage signals for what Fleet committed, so that the cards and the fleet page
 * refresh the one thing that changed (see `fleetSignalChannels`): one message per channel per
 * transaction, to every signed-in user (a message only names subjects and statuses, which every
 * signed-in user may read through the API).
 */
export class FleetSignals implements FleetListener {
  private constructor(private readonly signals: SignalsService) {}

  static create(options: { signals: SignalsService }): FleetSignals {
    return new FleetSignals(options.signals);
  }

  async eventsCommitted(events: CommittedEvent[]): Promise<void> {
    const messages = new Map<string, FleetSignalMessage>();
    const add = (
      channel: string,
      kind: FleetSignalMessage['kind'],
      change: FleetSignalChange,
      entityRef?: string,
    ) => {
      let message = messages.get(channel);
      if (!message) {
        message = { kind, changes: [] };
        if (entityRef) message.entityRef = entityRef;
        messages.set(channel, message);
      }
      message.changes.push(change);
    };
    for (const event of events) {
      const change: FleetSignalChange = {
        subject: event.subject,
        from: event.from ?? null,
        to: event.to,
        reason: event.reason ?? null,
      };
      if (event.subjectKind === 'cluster') {
        add(fleetSignalChannels.clusters, 'cluster', change);
      } else if (event.subjectKind === 'deployment') {
        if (event.cluster) change.cluster = event.cluster;
        add(fleetSignalChannels.deployments, 'deployment', change);
        if (event.entityRef) {
          add(
            fleetSignalChannels.deploymentsOf(event.entityRef),
            'deployment',
            change,
            event.entityRef,
          );
        }
      } else if (event.entityRef) {
        add(fleetSignalChannels.releases, 'release', change);
        add(
          fleetSignalChannels.releasesOf(event.entityRef),
          'release',
          change,
          event.entityRef,
        );
      }
    }
    await this.publish(messages);
  }

  /** The component's card shows where its placement was refused: it refreshes at once. */
  async placementRefusalsChanged(
    change: PlacementRefusalsChange,
  ): Promise<void> {
    const changes = placementChanges(change);
    if (changes.length === 0) return;
    await this.publish(
      new Map([
        [
          fleetSignalChannels.deploymentsOf(change.entityRef),
          { kind: 'placement', entityRef: change.entityRef, changes },
        ],
      ]),
    );
  }

  /** The component's release panel shows a new measurement or judgment at once. */
  async releaseProgressed(change: ReleaseProgressChange): Promise<void> {
    await this.publish(
      new Map([
        [
          fleetSignalChannels.releasesOf(change.entityRef),
          {
            kind: 'release',
            entityRef: change.entityRef,
            changes: [
              {
                subject: change.releaseId,
                from: change.phase,
                to: change.phase,
                reason: 'PROGRESS',
              },
            ],
          },
        ],
      ]),
    );
  }

  /** The component's card shows what a rollout waits for as it changes. */
  async deploymentProgressed(change: DeploymentProgressChange): Promise<void> {
    await this.publish(
      new Map([
        [
          fleetSignalChannels.deploymentsOf(change.entityRef),
          {
            kind: 'deployment',
            entityRef: change.entityRef,
            changes: [
              {
                subject: change.deploymentId,
                from: 'PROGRESSING',
                to: 'PROGRESSING',
                reason: 'PROGRESS',
                cluster: change.cluster,
              },
            ],
          },
        ],
      ]),
    );
  }

  private async publish(
    messages: Map<string, FleetSignalMessage>,
  ): Promise<void> {
    await Promise.all(
      [...messages].flatMap(([channel, message]) =>
        chunks(message.changes).map(changes =>
          this.signals.publish<FleetSignalMessage>({
            recipients: { type: 'broadcast' },
            channel,
            message: { ...message, changes },
          }),
        ),
      ),
    );
  }
}

/**
 * The clusters whose refusal came or went between `previous` and `refused`: to `REFUSED` with the
 * reason, or to `ALLOWED`.
 */
export function placementChanges(
  change: Pick<PlacementRefusalsChange, 'previous' | 'refused'>,
): FleetSignalChange[] {
  const before = new Map(change.previous.map(r => [r.cluster, r.reason]));
  const now = new Map(change.refused.map(r => [r.cluster, r.reason]));
  const changes: FleetSignalChange[] = [];
  for (const [cluster, reason] of now) {
    if (before.get(cluster) !== reason) {
      changes.push({
        subject: cluster,
        from: before.has(cluster) ? 'REFUSED' : null,
        to: 'REFUSED',
        reason,
      });
    }
  }
  for (const cluster of before.keys()) {
    if (!now.has(cluster)) {
      changes.push({
        subject: cluster,
        from: 'REFUSED',
        to: 'ALLOWED',
        reason: null,
      });
    }
  }
  return changes;
}

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += MAX_CHANGES) {
    out.push(items.slice(at, at + MAX_CHANGES));
  }
  return out;
}
