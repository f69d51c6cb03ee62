import type { LoggerService } from '@backstage/backend-plugin-api';
import { parseEntityRef } from '@backstage/catalog-model';
import { reasonWords } from '@cnp/plugin-fleet-common';
import type {
  NotificationSendOptions,
  NotificationService,
} from '@backstage/plugin-notifications-node';
import { asError } from '../util/errors';
import { redactDetail } from '../util/redactDetail';
import type {
  CommittedEvent,
  FleetListener,
  HealthCycleReport,
} from './FleetListener';

const WARN_EVERY_MS = 60_000;

/** The topic of every Fleet notification (users can mute it in their settings). */
export const FLEET_NOTIFICATION_TOPIC = 'fleet';

export interface FleetNotifierOptions {
  notifications: NotificationService;
  logger: LoggerService;
  /** Who hears about clusters: entity refs, usually groups. None: nobody does. */
  clusterAdmins: string[];
  /** The catalog namespace of the cluster entities (their page is the link). */
  clusterNamespace: string;
}

/**
 * Who did something, for people, as the portal names them: `guest` for `user:default/guest`,
 * `release-managers` for `group:default/release-managers`, `team-a/ops` outside the default
 * namespace ("via <service>" kept); one of Fleet's workers as it signs.
 */
export function actorWords(actor: string): string {
  const [who, ...via] = actor.split(' via ');
  let name = who.trim();
  if (/^[a-z]+:/i.test(name)) {
    try {
      const ref = parseEntityRef(name);
      const kind = ref.kind.toLocaleLowerCase('en-US');
      const short =
        ref.namespace === 'default' ? ref.name : `${ref.namespace}/${ref.name}`;
      name = kind === 'user' || kind === 'group' ? short : `${kind}:${short}`;
    } catch {
      // not a ref after all: as it is
    }
  }
  return [name, ...via].join(' via ');
}

/** A status in a sentence: `degraded` for `DEGRADED`. */
function statusWord(status: string): string {
  return reasonWords(status).toLocaleLowerCase('en-US');
}

/** An entity's page in the app, relative to its base URL. */
export function entityPath(entityRef: string): string {
  const { kind, namespace, name } = parseEntityRef(entityRef);
  return `/catalog/${encodeURIComponent(namespace)}/${encodeURIComponent(
    kind.toLocaleLowerCase('en-US'),
  )}/${encodeURIComponent(name)}`;
}

/**
 * Sends Backstage notifications about what needs a person:
 *
 * - to a component's owners (the notifications service resolves the component to its owner and
 *   the owner group to its members) when one of its deployments turns FAILED or DEGRADED, is
 *   rolled back automatically (or by someone else), is pruned, or when one of its releases ends
 *   ROLLED_BACK;
 * - to the cluster admins when a cluster goes OFFLINE, or, instead of one per cluster, once when
 *   the mass-outage guard rises.
 *
 * No notification carries a kubeconfig path or a system error: its recipients are a component's
 * owners, or the groups named to hear of clusters, not the cluster admins of the API, so its text
 * is redacted as the API redacts it for those who are not (the details stay on the cluster's
 * and the deployment's pages, for the admins).
 *
 * One notification per transition, each with a link to the entity. Repeats of the same news
 * about the same deployment, cluster or release (a cluster flapping OFFLINE again) share a
 * `scope`, so the notifications backend updates that notification (unread again) instead of
 * piling up new ones.
 */
export class FleetNotifier implements FleetListener {
  private lastWarningAt = -Infinity;

  private constructor(private readonly options: FleetNotifierOptions) {}

  static create(options: FleetNotifierOptions): FleetNotifier {
    return new FleetNotifier(options);
  }

  async eventsCommitted(events: CommittedEvent[]): Promise<void> {
    const sends: Array<Promise<void>> = [];
    for (const event of events) {
      const note = this.aboutEvent(event);
      if (note) sends.push(this.send(note.recipients, note.payload));
    }
    await Promise.all(sends);
  }

  async healthCycleFinished(report: HealthCycleReport): Promise<void> {
    const { clusterAdmins } = this.options;
    if (clusterAdmins.length === 0) return;
    const { summary } = report;
    if (report.massOutageRaised) {
      await this.send(
        { entityRef: clusterAdmins },
        {
          title: `Fleet: mass outage suspected, ${summary.massOutage.clusters.length} clusters offline`,
          description: `${
            summary.massOutage.message ?? ''
          } Clusters: ${summary.massOutage.clusters.join(', ')}.`.trim(),
          link: '/fleet',
          severity: 'critical',
          topic: FLEET_NOTIFICATION_TOPIC,
          scope: 'fleet:mass-outage',
        },
      );
    }
    // While the guard is up, its clusters are that one notification, not one each.
    if (summary.massOutage.active) return;
    await Promise.all(
      report.transitions
        .filter(t => t.to === 'OFFLINE')
        .map(t => {
          const ref = `resource:${this.options.clusterNamespace}/${t.cluster}`;
          return this.send(
            { entityRef: clusterAdmins },
            {
              title: `Fleet: cluster ${t.cluster} is offline`,
              description: `${reasonWords(t.from)} → Offline: ${reasonWords(
                redactDetail(t.reason),
              )}.${
                t.from === 'ONLINE'
                  ? ' Its deployed deployments are now degraded.'
                  : ''
              }`,
              link: entityPath(ref),
              severity: 'high',
              topic: FLEET_NOTIFICATION_TOPIC,
              scope: `fleet:cluster:${t.cluster}:OFFLINE`,
            },
          );
        }),
    );
  }

  private aboutEvent(
    event: CommittedEvent,
  ): { recipients: Recipients; payload: NotificationPayload } | undefined {
    const { entityRef } = event;
    if (!entityRef) return undefined;
    const name = parseEntityRef(entityRef).name;
    const link = entityPath(entityRef);
    const recipients: Recipients = {
      entityRef,
      // Whoever did it by hand knows already.
      ...(event.actor.startsWith('user:')
        ? { excludeEntityRef: event.actor }
        : {}),
    };
    const base = { link, topic: FLEET_NOTIFICATION_TOPIC };
    const detail = event.message ? `: ${redactDetail(event.message)}` : '';
    const why = event.reason ? `: ${reasonWords(event.reason)}` : '';
    if (event.subjectKind === 'release') {
      if (event.to !== 'ROLLED_BACK' || event.from === 'ROLLED_BACK')
        return undefined;
      return {
        recipients,
        payload: {
          ...base,
          title: `Fleet: a release of ${name} was rolled back`,
          description: `The release was rolled back${why}${detail}`,
          severity: 'high',
          scope: releaseScope(entityRef),
        },
      };
    }
    if (event.subjectKind !== 'deployment') return undefined;
    const where = event.cluster ? ` on ${event.cluster}` : '';
    // One scope per deployment and kind of news: a repeat updates its notification.
    const scope = (kind: string) => `fleet:deployment:${event.subject}:${kind}`;
    if (event.to === 'REMOVED' && event.reason === 'PRUNED') {
      return {
        recipients,
        payload: {
          ...base,
          title: `Fleet: ${name} was pruned${where}`,
          description: `Its placement no longer selects the cluster, and it asks for pruning${detail}`,
          severity: 'low',
          scope: scope('PRUNED'),
        },
      };
    }
    if (
      event.reason === 'AUTO_ROLLED_BACK' ||
      (event.reason === 'REVISION_ROLLBACK' && event.actor.startsWith('user:'))
    ) {
      return {
        recipients,
        payload: {
          ...base,
          title: `Fleet: ${name} was rolled back${where}`,
          description: `${
            event.reason === 'AUTO_ROLLED_BACK'
              ? 'Rolled back automatically'
              : `Rolled back by ${actorWords(event.actor)}`
          }${detail}`,
          severity: 'high',
          scope: scope('ROLLED_BACK'),
        },
      };
    }
    if (
      (event.to === 'FAILED' || event.to === 'DEGRADED') &&
      event.from !== event.to
    ) {
      return {
        recipients,
        payload: {
          ...base,
          title: `Fleet: ${name} is ${statusWord(event.to)}${where}`,
          description: `${
            event.from ? reasonWords(event.from) : 'New'
          } → ${reasonWords(event.to)}${why}${detail}`,
          // A failure is critical, a degradation a warning: never the check mark of `normal`.
          severity: event.to === 'FAILED' ? 'critical' : 'high',
          scope: scope(event.to),
        },
      };
    }
    return undefined;
  }

  private async send(
    recipients: Recipients,
    payload: NotificationPayload,
  ): Promise<void> {
    try {
      await this.options.notifications.send({
        recipients: { type: 'entity', ...recipients },
        // Each part was redacted where it was written; this holds for any text added later.
        payload: {
          ...payload,
          description:
            payload.description === undefined
              ? undefined
              : redactDetail(payload.description),
        },
      });
    } catch (error) {
      // A backend without the notifications plugin fails every send: one warning a minute.
      const now = Date.now();
      const log =
        now - this.lastWarningAt >= WARN_EVERY_MS
          ? this.options.logger.warn
          : this.options.logger.debug;
      if (log === this.options.logger.warn) this.lastWarningAt = now;
      log.call(
        this.options.logger,
        `Could not send the Fleet notification "${payload.title}"`,
        asError(error),
      );
    }
  }
}

type NotificationPayload = NotificationSendOptions['payload'];

/**
 * The one scope of every notification about a component's releases: a newer release's news
 * replaces an older one's (updated, unread again) instead of leaving it beside it.
 */
export function releaseScope(entityRef: string): string {
  return `fleet:releases:${entityRef}`;
}
type Recipients = { entityRef: string | string[]; excludeEntityRef?: string };
