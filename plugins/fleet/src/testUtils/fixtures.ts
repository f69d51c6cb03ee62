import type { Entity } from '@backstage/catalog-model';
import type {
  Application,
  ApplicationFleetStatus,
  Cluster,
  Deployment,
  FleetEvent,
  FleetSummary,
  ManifestSource,
  Preview,
  Release,
  Revision,
} from '@cnp/plugin-fleet-common';
import type { FleetApi } from '../api';

/** The time of a fixture: when the test builds it, so that it reads "just now" however long the run. */
const now = () => new Date().toISOString();

export function cluster(
  name: string,
  status: Cluster['status'],
  extra: Partial<Cluster> = {},
): Cluster {
  return {
    name,
    endpoint: `https://127.0.0.1:6550/clusters/${name}`,
    kubeconfigRef: `/kube/${name}.yaml`,
    context: name,
    source: 'discovered',
    labels: {},
    status,
    statusReason:
      status === 'OFFLINE'
        ? 'FAILURE_THRESHOLD_REACHED: 2/2 consecutive probes failed: socket hang up'
        : null,
    consecutiveFailures: status === 'OFFLINE' ? 2 : 0,
    consecutiveSuccesses: status === 'ONLINE' ? 1 : 0,
    failureThreshold: null,
    lastProbeAt: now(),
    lastSuccessAt: status === 'ONLINE' ? now() : null,
    lastTransitionAt: null,
    probeLatencyMs: null,
    serverVersion: null,
    createdAt: now(),
    updatedAt: now(),
    ...extra,
  };
}

/** cluster-01 … cluster-NN, every third OFFLINE, env=prod on the even ones. */
export function manyClusters(n: number): Cluster[] {
  return Array.from({ length: n }, (_, i) => {
    const name = `cluster-${String(i + 1).padStart(2, '0')}`;
    const status: Cluster['status'] = (i + 1) % 3 === 0 ? 'OFFLINE' : 'ONLINE';
    return cluster(name, status, {
      labels: (i + 1) % 2 === 0 ? { env: 'prod' } : { env: 'dev' },
    });
  });
}

export function deployment(
  clusterName: string,
  status: Deployment['status'],
  extra: Partial<Deployment> = {},
): Deployment {
  return {
    id: `dep-${clusterName}`,
    applicationId: 'app-1',
    entityRef: 'component:default/payments',
    cluster: clusterName,
    clusterStatus: 'ONLINE',
    status,
    statusReason: null,
    message: null,
    syncStatus: 'SYNCED',
    image: 'ghcr.io/acme/payments:1.4.2',
    revision: 1,
    placed: true,
    lastAppliedAt: null,
    lastSyncedAt: null,
    createdAt: now(),
    updatedAt: now(),
    ...extra,
  };
}

/** Revision `n` of the deployment on `clusterName`, running `payments:<tag>`. */
export function revision(
  clusterName: string,
  n: number,
  tag: string,
  extra: Partial<Revision> = {},
): Revision {
  return {
    deploymentId: `dep-${clusterName}`,
    applicationId: 'app-1',
    cluster: clusterName,
    revision: n,
    image: `ghcr.io/acme/payments:${tag}`,
    replicas: null,
    env: null,
    resources: null,
    namespace: null,
    port: 8080,
    cause: 'deploy',
    createdBy: 'user:default/alice',
    createdAt: now(),
    outcome: 'DEPLOYED',
    outcomeReason: null,
    outcomeAt: now(),
    source: null,
    ...extra,
  };
}

/** The application of `entityRef` (payments unless told), placed on env=prod clusters. */
export function application(
  id = 'app-1',
  entityRef = 'component:default/payments',
): Application {
  return {
    id,
    entityRef,
    name: entityRef.slice(entityRef.lastIndexOf('/') + 1),
    origin: null,
    spec: { image: 'ghcr.io/acme/payments:1.4.2', replicas: 1 },
    placement: { clusterSelector: { matchLabels: { env: 'prod' } } },
    removing: false,
    version: 1,
    createdAt: now(),
    updatedAt: now(),
  };
}

/** A release of app-1 to `released`, skipping `offline` as OFFLINE. */
export function release(released: string[], offline: string[] = []): Release {
  return {
    id: 'rel-1',
    applicationId: 'app-1',
    entityRef: 'component:default/payments',
    createdBy: 'user:default/alice',
    createdAt: now(),
    image: 'ghcr.io/acme/payments:1.5.0',
    version: null,
    status: 'PROGRESSING',
    targets: released.map(c => ({
      cluster: c,
      deploymentId: `dep-${c}`,
      revision: 2,
      status: 'PROGRESSING',
    })),
    skipped: offline.map(c => ({
      cluster: c,
      reason: `Cluster '${c}' is OFFLINE`,
    })),
  };
}

/**
 * A progressive release of app-1 to payments:1.5.0 in two waves: sim-1 at 20 % waiting for
 * promote with a failing measurement, sim-2 and sim-3 waiting for their wave.
 */
export function progressiveRelease(extra: Partial<Release> = {}): Release {
  return {
    ...release([]),
    id: 'rel-2',
    status: 'PROGRESSING',
    strategy: {
      waves: [{ clusters: ['sim-1'] }, { percent: 100 }],
      canary: {
        steps: [
          { setWeight: 20 },
          { pause: {} },
          { setWeight: 60 },
          { pause: { duration: '30s' } },
          { setWeight: 100 },
        ],
      },
    },
    progress: {
      phase: 'PROGRESSING',
      currentWave: 0,
      waves: [['sim-1'], ['sim-2', 'sim-3']],
      clusters: [
        {
          cluster: 'sim-1',
          wave: 0,
          mode: 'rollout',
          state: 'RUNNING',
          stepIndex: 1,
          weight: 20,
          awaitingPromote: true,
          failures: 1,
          inconclusive: 0,
        },
        {
          cluster: 'sim-2',
          wave: 1,
          mode: 'replicas',
          state: 'WAITING',
          stepIndex: 0,
          weight: 0,
          failures: 0,
          inconclusive: 0,
        },
      ],
      analysis: [
        {
          template: 'http-success-rate',
          cluster: 'sim-1',
          phase: 'Successful',
          value: 0.999,
          condition: 'result[0] >= 0.995',
          at: new Date(Date.now() - 20_000).toISOString(),
        },
        {
          template: 'http-success-rate',
          cluster: 'sim-1',
          phase: 'Failed',
          value: 0.98123,
          condition: 'result[0] >= 0.995',
          at: now(),
        },
      ],
      updatedAt: now(),
    },
    ...extra,
  };
}

/** The fleet status of `applicationId`: `payments:<tag>` on each cluster, with its sync status. */
export function applicationStatus(
  applicationId: string,
  clusters: Array<[string, string, Deployment['syncStatus']]>,
  summaryLine: string,
): ApplicationFleetStatus {
  return {
    applicationId,
    entityRef: 'component:default/payments',
    clusters: clusters.map(([c, tag, syncStatus], i) => ({
      cluster: c,
      deploymentId: `dep-${c}`,
      revision: i + 1,
      image: `ghcr.io/acme/payments:${tag}`,
      status: 'DEPLOYED',
      syncStatus,
      placed: true,
    })),
    totals: {
      deployments: clusters.length,
      bySyncStatus: { SYNCED: 0, OUT_OF_SYNC: 0, UNKNOWN: 0 },
      byImage: [],
    },
    summary: summaryLine,
  };
}

/** Where `ledger`'s manifests came from: `deploy/` of its repository at v2.1.0. */
export function manifestSource(
  extra: Partial<ManifestSource> = {},
): ManifestSource {
  return {
    url: 'https://github.com/acme/ledger/tree/v2.1.0/deploy',
    version: 'v2.1.0',
    commit: '3f9c2a17b0d84e5c9a6f1e2d3c4b5a6978695a4b',
    digest:
      'sha256:9d1c0f2e6b7a8c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9d0e1f',
    objectCount: 4,
    ...extra,
  };
}

/**
 * A preview of `ledger` at v2.1.0: on sim-1 a ConfigMap created, the Deployment updated (its
 * image and replicas), the Service unchanged and an old CronJob pruned; sim-2 refused.
 */
export function manifestsPreview(extra: Partial<Preview> = {}): Preview {
  return {
    source: manifestSource(),
    clusters: [
      {
        cluster: 'sim-1',
        status: 'previewed',
        message: null,
        objects: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            namespace: 'ledger',
            name: 'ledger-settings',
            action: 'create',
            paths: [],
          },
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            namespace: 'ledger',
            name: 'ledger-api',
            action: 'update',
            paths: ['/spec/replicas', '/spec/template/spec/containers/0/image'],
          },
          {
            apiVersion: 'v1',
            kind: 'Service',
            namespace: 'ledger',
            name: 'ledger-api',
            action: 'unchanged',
            paths: [],
          },
          {
            apiVersion: 'batch/v1',
            kind: 'CronJob',
            namespace: 'ledger',
            name: 'ledger-nightly-report',
            action: 'prune',
            paths: [],
          },
        ],
      },
      {
        cluster: 'sim-2',
        status: 'refused',
        message:
          "Project 'finance' does not allow kind ClusterRole on cluster 'sim-2'",
        objects: [],
      },
    ],
    ...extra,
  };
}

/** `ledger`, whose own manifests are in `deploy/` of its repository. */
export const ledgerEntity: Entity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Component',
  metadata: {
    name: 'ledger',
    namespace: 'default',
    annotations: {
      'cnp.io/manifests-ref': 'dir:./deploy',
      // Beside its manifests: never sent for them unless the user types it.
      'cnp.io/image': 'ghcr.io/acme/ledger:2.1.0',
      'cnp.io/clusters': 'sim-1,sim-2',
    },
  },
  spec: { type: 'service', lifecycle: 'production', owner: 'guests' },
};

export const paymentsEntity: Entity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Component',
  metadata: {
    name: 'payments',
    namespace: 'default',
    annotations: {
      'cnp.io/image': 'ghcr.io/acme/payments:1.4.2',
      'cnp.io/clusters': 'sim-1,sim-2,sim-3',
    },
  },
  spec: { type: 'service', lifecycle: 'production', owner: 'guests' },
};

export const clusterEntity: Entity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Resource',
  metadata: { name: 'sim-2', namespace: 'default' },
  spec: { type: 'kubernetes-cluster', owner: 'guests' },
};

export const event: FleetEvent = {
  id: '7',
  subjectKind: 'cluster',
  subject: 'sim-2',
  actor: 'fleet-health',
  from: 'ONLINE',
  to: 'OFFLINE',
  reason: 'FAILURE_THRESHOLD_REACHED',
  message: '2/2 consecutive probes failed',
  createdAt: now(),
  entityRef: null,
  cluster: 'sim-2',
};

export const summary: FleetSummary = {
  clusters: { total: 3, ONLINE: 1, OFFLINE: 1, UNKNOWN: 1 },
  deployments: {
    total: 1,
    byStatus: {
      PENDING: 0,
      PROGRESSING: 0,
      DEPLOYED: 1,
      DEGRADED: 0,
      FAILED: 0,
      REMOVING: 0,
    },
    bySyncStatus: { SYNCED: 1, OUT_OF_SYNC: 0, UNKNOWN: 0 },
  },
  massOutage: { active: false, clusters: [] },
};

/** A FleetApi whose every method is a jest mock with a sensible default answer. */
export function mockFleetApi(
  overrides: Partial<Record<keyof FleetApi, jest.Mock>> = {},
): jest.Mocked<FleetApi> {
  return {
    listClusters: jest
      .fn()
      .mockResolvedValue([
        cluster('sim-1', 'ONLINE'),
        cluster('sim-2', 'OFFLINE'),
        cluster('sim-3', 'UNKNOWN'),
      ]),
    getCluster: jest
      .fn()
      .mockResolvedValue(
        cluster('sim-2', 'OFFLINE', { labels: { env: 'prod' } }),
      ),
    listClusterEvents: jest.fn().mockResolvedValue([event]),
    listRecentEvents: jest.fn().mockResolvedValue([event]),
    getSummary: jest.fn().mockResolvedValue(summary),
    listDeploymentCounts: jest.fn().mockResolvedValue([]),
    runHealthCycle: jest.fn(),
    listApplications: jest.fn().mockResolvedValue([]),
    getApplicationStatus: jest.fn(),
    createRelease: jest.fn(),
    previewApplication: jest.fn(),
    getRelease: jest.fn(),
    listReleases: jest.fn().mockResolvedValue([]),
    promoteRelease: jest.fn(),
    pauseRelease: jest.fn(),
    resumeRelease: jest.fn(),
    abortRelease: jest.fn(),
    approveRelease: jest.fn(),
    rejectRelease: jest.fn(),
    listWaitingReleases: jest.fn().mockResolvedValue([]),
    listReleasesUnderWay: jest.fn().mockResolvedValue([]),
    listFreezeWindows: jest.fn().mockResolvedValue([]),
    listAnalysisProviders: jest
      .fn()
      .mockResolvedValue([{ type: 'prometheus', addresses: [] }]),
    listStages: jest.fn().mockResolvedValue([]),
    listDeployments: jest.fn().mockResolvedValue([]),
    createDeployment: jest.fn(),
    listDeploymentEvents: jest.fn().mockResolvedValue([]),
    listRevisions: jest.fn().mockResolvedValue([]),
    rollback: jest.fn(),
    undeploy: jest.fn(),
    ...overrides,
  } as jest.Mocked<FleetApi>;
}
