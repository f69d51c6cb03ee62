import type {
  FreezeWindow,
  Release,
  StageStatus,
} from '@cnp/plugin-fleet-common';
import { release } from './fixtures';

/** The time of a fixture: when the test builds it, so that it reads "just now" however long the run. */
const now = () => new Date().toISOString();

/**
 * payments' stages: staging (sim-1) verified 1.5.0 and soaks until in an hour; prod (sim-2,
 * sim-3) runs mixed versions and requires staging, missing the soak and an approval.
 */
export function stages(): StageStatus[] {
  return [
    {
      name: 'staging',
      clusters: ['sim-1'],
      version: 'ghcr.io/acme/payments:1.5.0',
      verified: {
        version: 'ghcr.io/acme/payments:1.5.0',
        since: now(),
        soakedUntil: new Date(Date.now() + 3600_000).toISOString(),
      },
      requires: null,
      missing: [],
    },
    {
      name: 'prod',
      clusters: ['sim-2', 'sim-3'],
      version: null,
      verified: null,
      requires: 'staging',
      missing: ['staging soaks 1.5.0 for another 60 minutes'],
    },
  ];
}

/**
 * A release of payments 1.5.0 to prod, started by alice, waiting for 1 approval from the release
 * managers, with no decision yet.
 */
export function waitingRelease(extra: Partial<Release> = {}): Release {
  return {
    ...release(['sim-2', 'sim-3']),
    id: 'rel-9',
    status: 'WAITING_FOR_APPROVAL',
    stage: 'prod',
    targets: [],
    gate: {
      approvals: { groups: ['group:default/release-managers'], count: 1 },
      decisions: [],
      window: null,
      openedAt: null,
      openedBy: null,
    },
    ...extra,
  };
}

/** The freeze window `name` on sim-2: open for another hour, or (closed) opening tomorrow. */
export function freezeWindow(name: string, open: boolean): FreezeWindow {
  const hour = 3600_000;
  return {
    name,
    clusterSelector: 'env=prod',
    cron: '0 18 * * 5',
    start: null,
    duration: '2h',
    timeZone: 'UTC',
    open,
    openedAt: open ? new Date(Date.now() - hour).toISOString() : null,
    closesAt: open ? new Date(Date.now() + hour).toISOString() : null,
    nextOpensAt: new Date(Date.now() + 24 * hour).toISOString(),
    clusters: ['sim-2'],
  };
}
