import {
  annotatedClusters,
  FLEET_ANNOTATION_CLUSTER_SELECTOR,
  type Application,
  type PlacementRefusal,
} from '@cnp/plugin-fleet-common';
import type {
  ClusterRecord,
  DeploymentState,
  PlacementGrant,
} from '../database/types';
import {
  isEmptySelector,
  parseLabelSelector,
} from '../kubernetes/labelSelector';
import { asError } from '../util/errors';
import {
  hasPlacement,
  placementTargets,
  type AnnotatedPlacement,
} from './placement';
import {
  RECONCILE_ACTOR as ACTOR,
  type HeldDeployments,
  type ReconcileSummary,
  type ReconcileWorkerOptions,
} from './reconcileTypes';

type PlacerOptions = Pick<
  ReconcileWorkerOptions,
  | 'stores'
  | 'deployments'
  | 'annotationsOf'
  | 'logger'
  | 'placementGate'
  | 'projectGate'
  | 'listener'
>;

/** What one pass of placement reads once for every application. */
type PlacementPass = {
  clusters: ClusterRecord[];
  summary: ReconcileSummary;
  held: HeldDeployments;
  excluded: Map<string, Set<string>>;
  grants: Map<string, PlacementGrant>;
};

/** What unplacing does to a deployment, if anything. */
function placementChange(
  selected: boolean,
  online: boolean,
  placed: boolean,
  prune: boolean | undefined,
): 'place' | 'prune' | 'unplace' | undefined {
  if (selected) return placed ? undefined : 'place';
  if (!online) return undefined;
  if (prune) return 'prune';
  return placed ? 'unplace' : undefined;
}

/**
 * Placement: gives every application a deployment on each ONLINE/UNKNOWN cluster its placement
 * (or its entity's `cnp.io/clusters` / `cnp.io/cluster-selector`) selects, unless a gate refuses
 * the cluster, and unplaces (prunes, or marks no longer placed) those it no longer selects.
 */
export class Placer {
  constructor(private readonly options: PlacerOptions) {}

  /** Places each application; deployments running releases hold are never unplaced. */
  async place(
    applications: Application[],
    clusters: ClusterRecord[],
    summary: ReconcileSummary,
    held: HeldDeployments,
  ): Promise<void> {
    const { stores, placementGate } = this.options;
    const pass: PlacementPass = {
      clusters,
      summary,
      held,
      excluded: await stores.applications.listExcludedClusters(),
      grants: placementGate
        ? await stores.applications.listPlacementGrants()
        : new Map(),
    };
    for (const application of applications) {
      if (application.removing) continue;
      await this.placeApplication(application, pass);
    }
  }

  private async placeApplication(
    application: Application,
    pass: PlacementPass,
  ): Promise<void> {
    const { stores, placementGate, projectGate } = this.options;
    const { placement } = application;
    const read = await this.annotatedPlacement(application);
    const { annotated } = read;
    // Whether the placement could be read whole: a catalog that does not answer prunes nothing.
    let evaluated = read.evaluated;
    const skip = pass.excluded.get(application.id);
    const targets = placementTargets(
      placement,
      annotated,
      pass.clusters,
    ).filter(name => !skip?.has(name));
    const unplacing = evaluated && hasPlacement(placement, annotated);
    // An application placed nowhere (deployed by hand, or whose placement could not be read)
    // has nothing to place nor to unplace: its deployments are not read for it.
    const current =
      unplacing || targets.length > 0
        ? await stores.deployments.listDeploymentStates({
            applicationId: application.id,
          })
        : [];
    if (unplacing) {
      await this.unplace(application, current, targets, pass);
    }
    const existing = new Set(current.map(d => d.cluster));
    const refused: PlacementRefusal[] = [];
    for (const cluster of targets) {
      const target = pass.clusters.find(c => c.name === cluster)!;
      if (existing.has(cluster) || target.status === 'OFFLINE') continue;
      const outcome = await this.placeOn(application, target, pass);
      if (outcome === 'unreadable') evaluated = false;
      else if (outcome) refused.push({ cluster, reason: outcome.refused });
    }
    // A placement read whole says which clusters it was refused; one that could not be read
    // leaves the last word as it was.
    if (
      (placementGate || projectGate) &&
      evaluated &&
      JSON.stringify(refused) !==
        JSON.stringify(application.placementRefused ?? [])
    ) {
      await this.recordRefusals(application, refused);
    }
  }

  /** The entity's annotated placement, unless the application's own is explicit. */
  private async annotatedPlacement(
    application: Application,
  ): Promise<{ annotated: AnnotatedPlacement; evaluated: boolean }> {
    const { annotationsOf, logger } = this.options;
    const { placement } = application;
    const placementIsExplicit =
      (placement.clusters?.length ?? 0) > 0 &&
      !isEmptySelector(placement.clusterSelector);
    if (placementIsExplicit || !annotationsOf)
      return { annotated: {}, evaluated: true };
    try {
      const annotations = await annotationsOf(application.entityRef);
      const selectorText = annotations[FLEET_ANNOTATION_CLUSTER_SELECTOR];
      const annotated = {
        clusters: annotatedClusters(annotations),
        clusterSelector: parseLabelSelector(selectorText),
      };
      // A selector that does not parse: the placement cannot be read whole.
      return {
        annotated,
        evaluated: !(selectorText?.trim() && !annotated.clusterSelector),
      };
    } catch (error) {
      logger
        .child({ entityRef: application.entityRef })
        .debug(
          `No catalog annotations for ${application.entityRef}`,
          asError(error),
        );
      return { annotated: {}, evaluated: false };
    }
  }

  /**
   * Deploys the application to one cluster its placement selects, unless a gate refuses it
   * (`{ refused }`) or its project cannot be read now (`'unreadable'`).
   */
  private async placeOn(
    application: Application,
    target: ClusterRecord,
    pass: PlacementPass,
  ): Promise<{ refused: string } | 'unreadable' | undefined> {
    const { deployments, logger, placementGate, projectGate } = this.options;
    const { summary } = pass;
    const { entityRef } = application;
    const cluster = target.name;
    let reason = placementGate?.(pass.grants.get(application.id), target);
    if (!reason && projectGate) {
      try {
        reason = await projectGate(application, target);
      } catch (error) {
        // The project cannot be read now (a catalog outage): nothing is placed, and the
        // refusals shown stay as they were.
        summary.errors.push({
          entityRef,
          cluster,
          message: asError(error).message,
        });
        return 'unreadable';
      }
    }
    if (reason) {
      summary.refused.push({ entityRef, cluster, reason });
      return { refused: reason };
    }
    // An application without an image is placed all the same: its component may bring its own
    // manifests, or name its image with cnp.io/image; the deploy says when there is none.
    try {
      const placed = await deployments.deploy(
        { entityRef, cluster, cause: 'placement' },
        ACTOR,
      );
      summary.placed.push({ entityRef, cluster, status: placed.status });
      logger.info(`Placed ${entityRef} on ${cluster} (${placed.status})`, {
        entityRef,
        cluster,
        status: placed.status,
      });
    } catch (error) {
      summary.errors.push({
        entityRef,
        cluster,
        message: asError(error).message,
      });
    }
    return undefined;
  }

  private async recordRefusals(
    application: Application,
    refused: PlacementRefusal[],
  ): Promise<void> {
    const { stores, logger, listener } = this.options;
    await stores.applications.setPlacementRefused(application.id, refused);
    listener?.placementRefusalsChanged?.({
      applicationId: application.id,
      entityRef: application.entityRef,
      previous: application.placementRefused ?? [],
      refused,
    });
    for (const { cluster, reason } of refused) {
      logger.warn(
        `Placement of ${application.entityRef} on ${cluster} refused: ${reason}`,
        { entityRef: application.entityRef, cluster },
      );
    }
  }

  /**
   * Deployments on clusters the placement no longer selects: undeployed (`PRUNED`) when the
   * placement says `prune`, else kept as no longer placed (never healed again); placed again
   * when it selects them anew. Only on ONLINE clusters: nothing is pruned or marked because a
   * cluster is OFFLINE or UNKNOWN. A deployment a running release holds is left alone; which
   * ones are held is read only when a deployment would change.
   */
  private async unplace(
    application: Application,
    current: DeploymentState[],
    targets: string[],
    pass: PlacementPass,
  ): Promise<void> {
    const { stores, deployments } = this.options;
    for (const deployment of current) {
      // Never a deployment in flight: its apply or rollout is not done yet.
      if (
        deployment.status === 'REMOVING' ||
        deployment.status === 'PENDING' ||
        deployment.status === 'PROGRESSING'
      )
        continue;
      const selected = targets.includes(deployment.cluster);
      const online =
        pass.clusters.find(c => c.name === deployment.cluster)?.status ===
        'ONLINE';
      const change = placementChange(
        selected,
        online,
        deployment.placed,
        application.placement.prune,
      );
      if (!change || (await pass.held()).has(deployment.id)) continue;
      if (change === 'place') {
        await stores.deployments.setPlaced(deployment.id, true, ACTOR);
      } else if (change === 'prune') {
        await deployments.undeploy(deployment.id, { reason: 'PRUNED' }, ACTOR);
        pass.summary.pruned.push({
          entityRef: application.entityRef,
          cluster: deployment.cluster,
        });
      } else {
        await stores.deployments.setPlaced(deployment.id, false, ACTOR);
      }
    }
  }
}
