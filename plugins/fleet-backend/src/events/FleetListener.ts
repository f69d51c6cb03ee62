import type { LoggerService } from '@backstage/backend-plugin-api';
import type {
  HealthCycleSummary,
  PlacementRefusal,
} from '@cnp/plugin-fleet-common';
import type { LoggedEvent } from '../database/eventLog';
import type { ProbeOutcome } from '../kubernetes/ClusterClients';
import { asError } from '../util/errors';

/**
 * An event of `fleet_events` once its transaction committed, with what a listener needs to route
 * it: the component of a deployment or a release (when its application still exists), and a
 * deployment's cluster. The event log hands these over as it commits them.
 */
export type CommittedEvent = LoggedEvent;

/** What one health cycle did, once its writes were committed. */
export interface HealthCycleReport {
  summary: HealthCycleSummary;
  /** The cluster transitions it committed, each with the status reason it gave. */
  transitions: Array<
    HealthCycleSummary['transitions'][number] & { reason: string }
  >;
  /** Whether this cycle raised the mass-outage guard (it was down before). */
  massOutageRaised: boolean;
  /** Every probe of the cycle (clusters that could not be probed are left out). */
  probes: Array<Exclude<ProbeOutcome, { kind: 'not-probeable' }>>;
}

/** What one reconcile run did. */
export interface ReconcileReport {
  durationMs: number;
  checked: number;
  errors: number;
}

/** The clusters the reconcile refused to place an application on, as they changed. */
export interface PlacementRefusalsChange {
  applicationId: string;
  entityRef: string;
  /** The refusals before this run wrote its own. */
  previous: PlacementRefusal[];
  refused: PlacementRefusal[];
}

/**
 * A running release's progress was written without a status event: a measurement, a judgment
 * against the baseline, a new weight. The component's release panel shows these as they come.
 */
export interface ReleaseProgressChange {
  releaseId: string;
  entityRef: string;
  /** The release's phase after the write. */
  phase: string;
}

/** A PROGRESSING deployment's message now says what its rollout still waits for. */
export interface DeploymentProgressChange {
  deploymentId: string;
  entityRef: string;
  cluster: string;
}

/**
 * Hears what Fleet committed, on the replica that committed it, exactly once: the status events
 * of clusters, deployments and releases (after their transaction), the health cycles and the
 * reconcile runs (each run by one replica at a time, or with health shards by each replica over
 * its own shards). Signals, notifications and metrics are
 * listeners; none of them can fail or slow the writer.
 */
export interface FleetListener {
  eventsCommitted?(events: CommittedEvent[]): void | Promise<void>;
  healthCycleFinished?(report: HealthCycleReport): void | Promise<void>;
  reconcileFinished?(report: ReconcileReport): void | Promise<void>;
  /** The reconcile wrote a different list of refused clusters for an application. */
  placementRefusalsChanged?(
    change: PlacementRefusalsChange,
  ): void | Promise<void>;
  /** The release orchestrator wrote a release's progress and committed no event with it. */
  releaseProgressed?(change: ReleaseProgressChange): void | Promise<void>;
  /** The rollout follower noted a PROGRESSING deployment's progress (no event). */
  deploymentProgressed?(change: DeploymentProgressChange): void | Promise<void>;
}

/**
 * Fans out to several listeners. Each call returns at once: a listener's work runs on its own,
 * and its failure is logged, never thrown at the writer.
 */
export class FleetListeners implements Required<FleetListener> {
  private readonly listeners: FleetListener[] = [];
  /** The listeners' calls still running (tests and shutdown wait for them). */
  private readonly running = new Set<Promise<void>>();

  private constructor(private readonly logger: LoggerService) {}

  static create(options: { logger: LoggerService }): FleetListeners {
    return new FleetListeners(options.logger);
  }

  add(listener: FleetListener): this {
    this.listeners.push(listener);
    return this;
  }

  eventsCommitted(events: CommittedEvent[]): void {
    if (events.length === 0) return;
    this.each('eventsCommitted', l => l.eventsCommitted?.(events));
  }

  healthCycleFinished(report: HealthCycleReport): void {
    this.each('healthCycleFinished', l => l.healthCycleFinished?.(report));
  }

  reconcileFinished(report: ReconcileReport): void {
    this.each('reconcileFinished', l => l.reconcileFinished?.(report));
  }

  placementRefusalsChanged(change: PlacementRefusalsChange): void {
    this.each('placementRefusalsChanged', l =>
      l.placementRefusalsChanged?.(change),
    );
  }

  releaseProgressed(change: ReleaseProgressChange): void {
    this.each('releaseProgressed', l => l.releaseProgressed?.(change));
  }

  deploymentProgressed(change: DeploymentProgressChange): void {
    this.each('deploymentProgressed', l => l.deploymentProgressed?.(change));
  }

  /** Resolves once every listener call made so far has ended. */
  async settled(): Promise<void> {
    while (this.running.size > 0) {
      await Promise.allSettled([...this.running]);
    }
  }

  private each(
    what: string,
    call: (listener: FleetListener) => void | Promise<void>,
  ): void {
    for (const listener of this.listeners) {
      const done = (async () => call(listener))().catch(error => {
        this.logger.warn(`A Fleet ${what} listener failed`, asError(error));
      });
      this.running.add(done);
      done.finally(() => this.running.delete(done));
    }
  }
}
