import { ConflictError } from '@backstage/errors';
import type {
  ApplicationPlacement,
  ApplicationSpec,
  EnvMap,
} from '@cnp/plugin-fleet-common';
import type { ApplicationStore, ClusterStore } from '../database/types';
import { applicationNameFor } from '../deploy/DeploymentService';
import type { ProjectGuard, ProjectWrite } from '../tenancy/ProjectGuard';

/** What the router checks against the component's project before a write. */
export interface TenancyChecks {
  /**
   * A registration or a change of an application: the namespace it deploys to, its env
   * references, its Ingress (in the project, and no other application's host), the clusters its
   * placement names. 403 naming the project and the rule, 409 naming the host's holder.
   */
  application(request: {
    entityRef: string;
    /** The application being changed (its own host is not a conflict). */
    applicationId?: string;
    /** The whole spec as it will be. */
    spec: ApplicationSpec;
    placement?: ApplicationPlacement;
  }): Promise<void>;
  /**
   * A deploy, release or rollback: the clusters (those that exist; an unknown name is the
   * service's 404), and the application's spec as stored (the namespace it deploys to, its env
   * references and Ingress; undefined for an application a deploy creates, which goes to the
   * deploy namespace) with a release's env references.
   */
  workload(request: {
    entityRef: string;
    clusters: string[];
    spec: ProjectWrite['spec'];
    env?: EnvMap;
  }): Promise<void>;
}

export function createTenancyChecks(options: {
  guard: ProjectGuard;
  stores: {
    clusters: Pick<ClusterStore, 'getCluster'>;
    applications: Pick<ApplicationStore, 'listApplicationsByIngressHost'>;
  };
}): TenancyChecks {
  const { guard, stores } = options;

  async function checkClusters(entityRef: string, names: string[]) {
    const clusters = await Promise.all(
      [...new Set(names)].map(name => stores.clusters.getCluster(name)),
    );
    await guard.checkClusters(
      entityRef,
      clusters.flatMap(c => (c ? [{ name: c.name, labels: c.labels }] : [])),
    );
  }

  return {
    async application({ entityRef, applicationId, spec, placement }) {
      await guard.checkWrite(entityRef, {
        appName: applicationNameFor(entityRef),
        spec,
        placement,
      });
      await checkClusters(entityRef, placement?.clusters ?? []);
      const host = spec.ingress?.host;
      if (host) {
        const holders = (
          await stores.applications.listApplicationsByIngressHost(host)
        ).filter(a => a.id !== applicationId && a.entityRef !== entityRef);
        if (holders.length > 0) {
          throw new ConflictError(
            `Ingress host '${host}' is already used by ${holders[0].entityRef}: each host belongs to one application`,
          );
        }
      }
    },
    async workload({ entityRef, clusters, spec, env }) {
      await guard.checkWrite(entityRef, {
        appName: applicationNameFor(entityRef),
        spec,
        env,
      });
      await checkClusters(entityRef, clusters);
    },
  };
}
