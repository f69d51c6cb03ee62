import { LoggerService, SchedulerService } from '@backstage/backend-plugin-api';
import type { FleetConfig } from '../config/FleetConfig';
import type { ClusterStore, FleetStateStore } from '../database/types';
import type { ClusterClients } from '../kubernetes/ClusterClients';
import type { FleetListener } from '../events/FleetListener';

/** What the health cycle reads and writes: the clusters' health, the fleet state, the lease. */
export type HealthStores = {
  clusters: Pick<
    ClusterStore,
    'listClusters' | 'updateClustersHealth' | 'inClusterTransaction'
  >;
  state: Pick<
    FleetStateStore,
    | 'getMassOutage'
    | 'setMassOutage'
    | 'setLastCycle'
    | 'getLastCycle'
    | 'takeLease'
    | 'releaseLease'
    | 'listLeases'
    | 'deleteExpiredLeases'
  >;
};

export interface HealthWorkerOptions {
  stores: HealthStores;
  clients: Pick<ClusterClients, 'probe'> &
    Partial<Pick<ClusterClients, 'retainOnly'>>;
  logger: LoggerService;
  scheduler?: SchedulerService;
  health: FleetConfig['health'];
  /** Runs discovery; called at the start of every cycle. */
  discover?: () => Promise<void>;
  /** How long a manual run waits for a running cycle to finish (default 2 minutes). */
  manualWaitMs?: number;
  /** Hears each cycle this process ran, once its writes are committed. */
  listener?: Pick<FleetListener, 'healthCycleFinished'>;
}
