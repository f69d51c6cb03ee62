import type { LoggerService } from '@backstage/backend-plugin-api';
import type {
  MetricsService,
  MetricsServiceObservableCallback,
} from '@backstage/backend-plugin-api/alpha';
import {
  CLUSTER_STATUSES,
  DEPLOYMENT_STATUSES,
  SYNC_STATUSES,
  PROGRESSIVE_PHASES,
} from '@cnp/plugin-fleet-common';
import type {
  ClusterStore,
  DeploymentStore,
  ReleaseStore,
} from '../database/types';
import type {
  FleetListener,
  HealthCycleReport,
  ReconcileReport,
} from '../events/FleetListener';
import { asError } from '../util/errors';

/** What the gauges read: the counts the fleet summary shows. */
export type MetricsStores = {
  clusters: Pick<ClusterStore, 'countClustersByStatus'>;
  deployments: Pick<DeploymentStore, 'countDeploymentsByStatus'>;
  releases: Pick<ReleaseStore, 'countReleasesByPhase'>;
};

/** Seconds: probes time out at a few seconds, cycles and reconciles run up to minutes. */
const PROBE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const RUN_BUCKETS = [
  0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];

/**
 * Fleet's OpenTelemetry metrics, through Backstage's metrics service (a meter named
 * `backstage-plugin-fleet`); whatever the backend's instrumentation exports them with (a
 * Prometheus exporter in this app) sees:
 *
 * - `fleet.clusters{status}`: clusters per status (gauge, read from the database);
 * - `fleet.health.probe.duration{outcome}`: probe latency, seconds (histogram);
 * - `fleet.health.cycle.duration`: one health cycle, seconds (histogram);
 * - `fleet.health.transitions{from,to}`: cluster status changes (counter);
 * - `fleet.deployments{status}` and `fleet.deployments.sync{sync_status}`: deployments per status
 *   and per sync status (gauges, read from the database);
 * - `fleet.reconcile.duration`: one reconcile run, seconds (histogram);
 * - `fleet.releases{phase}`: releases per phase, `IMMEDIATE` for those without a strategy (gauge).
 *
 * The gauges count the whole fleet (every replica reports the same numbers: aggregate them with
 * `max`); the histograms and the counter count what this replica ran.
 */
export class FleetMetrics implements FleetListener {
  private readonly probeDuration;
  private readonly cycleDuration;
  private readonly transitions;
  private readonly reconcileDuration;
  private readonly observed: Array<() => void> = [];
  private deploymentCounts?: ReturnType<
    DeploymentStore['countDeploymentsByStatus']
  >;

  private constructor(
    private readonly metrics: MetricsService,
    private readonly stores: MetricsStores,
    private readonly logger: LoggerService,
  ) {
    this.probeDuration = metrics.createHistogram<{ outcome: string }>(
      'fleet.health.probe.duration',
      {
        description: 'Latency of one cluster probe (list namespaces)',
        unit: 's',
        advice: { explicitBucketBoundaries: PROBE_BUCKETS },
      },
    );
    this.cycleDuration = metrics.createHistogram(
      'fleet.health.cycle.duration',
      {
        description: 'Duration of one health cycle over every cluster',
        unit: 's',
        advice: { explicitBucketBoundaries: RUN_BUCKETS },
      },
    );
    this.transitions = metrics.createCounter<{ from: string; to: string }>(
      'fleet.health.transitions',
      { description: 'Cluster status changes made by the health cycles' },
    );
    this.reconcileDuration = metrics.createHistogram(
      'fleet.reconcile.duration',
      {
        description:
          'Duration of one reconcile run (over every deployment, or with health shards over those of the shards the replica holds)',
        unit: 's',
        advice: { explicitBucketBoundaries: RUN_BUCKETS },
      },
    );
    this.gauge(
      'fleet.clusters',
      'Clusters per status',
      'status',
      CLUSTER_STATUSES,
      () => this.stores.clusters.countClustersByStatus(),
    );
    this.gauge(
      'fleet.deployments',
      'Deployments per status',
      'status',
      DEPLOYMENT_STATUSES,
      async () => (await this.deployments()).byStatus,
    );
    this.gauge(
      'fleet.deployments.sync',
      'Deployments per sync status',
      'sync_status',
      SYNC_STATUSES,
      async () => (await this.deployments()).bySyncStatus,
    );
    this.gauge(
      'fleet.releases',
      'Releases per phase (IMMEDIATE: without a strategy)',
      'phase',
      [...PROGRESSIVE_PHASES, 'IMMEDIATE'],
      () => this.stores.releases.countReleasesByPhase(),
    );
  }

  static create(options: {
    metrics: MetricsService;
    stores: MetricsStores;
    logger: LoggerService;
  }): FleetMetrics {
    return new FleetMetrics(options.metrics, options.stores, options.logger);
  }

  healthCycleFinished(report: HealthCycleReport): void {
    for (const probe of report.probes) {
      this.probeDuration.record(probe.latencyMs / 1000, {
        outcome: probe.kind,
      });
    }
    for (const t of report.transitions) {
      this.transitions.add(1, { from: t.from, to: t.to });
    }
    this.cycleDuration.record(report.summary.durationMs / 1000);
  }

  reconcileFinished(report: ReconcileReport): void {
    this.reconcileDuration.record(report.durationMs / 1000);
  }

  /** A gauge per value of `attribute`, every known value observed (zero included). */
  private gauge(
    name: string,
    description: string,
    attribute: string,
    known: readonly string[],
    read: () => Promise<Record<string, number>>,
  ) {
    const gauge = this.metrics.createObservableGauge(name, { description });
    const callback: MetricsServiceObservableCallback = async result => {
      try {
        const counts = await read();
        for (const key of new Set([...known, ...Object.keys(counts)])) {
          result.observe(counts[key] ?? 0, { [attribute]: key });
        }
      } catch (error) {
        // No value rather than a wrong one; the scrape goes on with the other metrics.
        this.logger.warn(`Could not read ${name} for metrics`, asError(error));
      }
    };
    gauge.addCallback(callback);
    this.observed.push(() => gauge.removeCallback(callback));
  }

  /** Stops observing the gauges (at shutdown: the stores are going away). */
  dispose(): void {
    this.observed.splice(0).forEach(remove => remove());
  }

  /** One read for both deployment gauges of a collection: shared while it runs. */
  private deployments() {
    if (!this.deploymentCounts) {
      const read = this.stores.deployments.countDeploymentsByStatus();
      this.deploymentCounts = read;
      const done = () => {
        if (this.deploymentCounts === read) this.deploymentCounts = undefined;
      };
      read.then(done, done);
    }
    return this.deploymentCounts;
  }
}
