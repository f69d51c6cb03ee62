/*
 * The Backstage signals Fleet publishes (`@backstage/plugin-signals-node`), so that the cards and
 * the fleet page refresh what changed as soon as it is committed instead of polling. Every
 * message only names what changed: a client reads the new state through the Fleet API, with its
 * own permissions.
 */

/**
 * The channels Fleet publishes on.
 *
 * - `fleet:clusters`: a cluster changed status (or was registered, relabelled, removed).
 * - `fleet:deployments`: deployments changed status or sync status, anywhere in the fleet.
 * - `fleet:deployments:<entityRef>`: the same, for one component's deployments; and (kind
 *   `placement`) a cluster its placement selects was refused by `fleet.cluster.deploy`
 *   (`to: 'REFUSED'`) or is no longer (`to: 'ALLOWED'`).
 * - `fleet:releases`: a release changed status (started, paused, resumed, completed, rolled
 *   back...), anywhere in the fleet.
 * - `fleet:releases:<entityRef>`: a release of that component took a step: a status change, or
 *   (`reason: 'PROGRESS'`, `from` equal to `to`) a measurement, a judgment or a weight written.
 *
 * @public
 */
export const fleetSignalChannels = {
  clusters: 'fleet:clusters',
  deployments: 'fleet:deployments',
  releases: 'fleet:releases',
  deploymentsOf: (entityRef: string) =>
    `fleet:deployments:${entityRef.toLocaleLowerCase('en-US')}`,
  releasesOf: (entityRef: string) =>
    `fleet:releases:${entityRef.toLocaleLowerCase('en-US')}`,
} as const;

/**
 * One change, as a signal names it: its subject and the status it went to.
 *
 * @public
 */
export type FleetSignalChange = {
  /** The cluster's name (clusters, placements), the deployment's or the release's id. */
  subject: string;
  from: string | null;
  to: string;
  reason: string | null;
  /** The deployment's cluster (deployments only). */
  cluster?: string;
};

/**
 * The message of every Fleet signal: the changes one database transaction committed, for one
 * channel.
 *
 * @public
 */
export type FleetSignalMessage = {
  kind: 'cluster' | 'deployment' | 'release' | 'placement';
  /** The component the changes belong to (deployments, releases and placements). */
  entityRef?: string;
  changes: FleetSignalChange[];
};
