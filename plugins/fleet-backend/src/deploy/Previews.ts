import { isError } from '@backstage/errors';
import type {
  Application,
  ClusterPreview,
  ManifestSource,
  Preview,
} from '@cnp/plugin-fleet-common';
import type { KubernetesObject } from '@kubernetes/client-node';
import pLimit from 'p-limit';
import type { ClusterRecord } from '../database/types';
import { asError } from '../util/errors';
import type {
  DeployRequest,
  DeploymentServiceOptions,
} from './deploymentTypes';
import type { DesiredStates, ReadManifests } from './DesiredStates';
import { objectsLeftBy } from './leftObjects';
import { OwnershipConflictError } from './ownership';

/** What a preview is asked for: an application's next revision on some clusters. */
export interface PreviewRequest {
  application: Application;
  clusters: ClusterRecord[];
  request: Pick<DeployRequest, 'image' | 'replicas' | 'version'>;
}

/** What a preview renders for one cluster. */
interface Rendered {
  objects: KubernetesObject[];
  /** What the current revisions may have left there, to prune. */
  previous: KubernetesObject[] | undefined;
  source: ManifestSource | undefined;
}

/** At most this many clusters are previewed at once. */
const PREVIEW_CONCURRENCY = 8;

/**
 * Previews: what a deploy or release would do on each cluster, by a server-side dry run of the
 * revision it would make (nothing is recorded or written). The component's own manifests are
 * read once for all the clusters. A cluster the project or an ownership rule refuses is
 * `refused` with the rule; one that is not ONLINE or does not answer is `unreachable`.
 */
export class Previews {
  constructor(
    private readonly options: Pick<
      DeploymentServiceOptions,
      'stores' | 'objectApplier' | 'applier'
    > & { desired: DesiredStates },
  ) {}

  async preview(asked: PreviewRequest): Promise<Preview> {
    const { application, clusters, request } = asked;
    const { stores, desired } = this.options;
    const deployments = await stores.deployments.listDeployments({
      applicationId: application.id,
    });
    const byCluster = new Map(deployments.map(d => [d.cluster, d]));
    const runsManifests = await Promise.all(
      deployments.map(d =>
        stores.revisions.getRevision(d.id, d.revision).then(r => !!r?.source),
      ),
    );
    // A version that does not exist or a malformed manifest is the caller's: a 400 for all.
    const manifests = await desired.manifestsOf(
      application.entityRef,
      request.version,
      runsManifests.some(Boolean),
    );
    let source: ManifestSource | null = null;
    const limit = pLimit(PREVIEW_CONCURRENCY);
    const previews = await Promise.all(
      clusters.map(cluster =>
        limit(async (): Promise<ClusterPreview> => {
          const answer = await this.previewOne(
            application,
            cluster,
            byCluster.get(cluster.name),
            request,
            manifests,
          );
          source ??= answer.source ?? null;
          return answer.preview;
        }),
      ),
    );
    return { source, clusters: previews };
  }

  /**
   * The objects the revision a deploy would make renders for the cluster, with those the current
   * revisions may have left (to prune) and where they came from. Throws what refuses them.
   */
  private async render(
    application: Application,
    cluster: ClusterRecord,
    existing: { id: string; revision: number } | undefined,
    request: PreviewRequest['request'],
    manifests: ReadManifests | undefined,
  ): Promise<Rendered> {
    const { stores, desired } = this.options;
    const current = existing
      ? await stores.revisions.getRevision(existing.id, existing.revision)
      : undefined;
    const spec = await desired.revisionFor({
      application,
      request,
      current,
      cluster,
      manifests,
    });
    const state = await desired.desiredFor({
      application,
      revision: spec,
      cluster,
    });
    return {
      objects: state.objects ?? generatedObjects(state.manifests),
      previous:
        existing && current?.source
          ? await objectsLeftBy(
              stores.revisions,
              existing.id,
              existing.revision,
            )
          : undefined,
      source: spec.source,
    };
  }

  private async previewOne(
    application: Application,
    cluster: ClusterRecord,
    existing: { id: string; revision: number } | undefined,
    request: PreviewRequest['request'],
    manifests: ReadManifests | undefined,
  ): Promise<{ preview: ClusterPreview; source?: ManifestSource }> {
    const { objectApplier } = this.options;
    const answer = (
      status: ClusterPreview['status'],
      message: string | null,
      objects: ClusterPreview['objects'] = [],
    ): ClusterPreview => ({ cluster: cluster.name, status, message, objects });
    if (cluster.status !== 'ONLINE') {
      return {
        preview: answer(
          'unreachable',
          `Cluster ${cluster.name} is ${cluster.status}`,
        ),
      };
    }
    if (!objectApplier) {
      return {
        preview: answer(
          'unreachable',
          'This Fleet backend cannot preview objects',
        ),
      };
    }
    let rendered: Rendered;
    try {
      rendered = await this.render(
        application,
        cluster,
        existing,
        request,
        manifests,
      );
    } catch (error) {
      if (
        error instanceof OwnershipConflictError ||
        (isError(error) &&
          (error.name === 'NotAllowedError' ||
            error.name === 'InputError' ||
            error.name === 'ConflictError'))
      ) {
        return { preview: answer('refused', error.message) };
      }
      throw error;
    }
    const { objects, previous, source } = rendered;
    const result = await objectApplier
      .preview(
        cluster,
        { entityRef: application.entityRef, objects, previous },
        {
          createsNamespace: namespace =>
            this.options.applier.createsNamespace({
              entityRef: application.entityRef,
              appName: application.name,
              namespace,
            }),
        },
      )
      .catch(error => ({
        kind: 'unreachable' as const,
        message: asError(error).message,
      }));
    if (result.kind !== 'previewed') {
      // The server refused an object (a bad field, a kind it does not serve): nothing would apply.
      const status = result.kind === 'unreachable' ? 'unreachable' : 'refused';
      return { preview: answer(status, result.message), source };
    }
    return {
      preview: answer(
        'previewed',
        null,
        result.objects.map(o => ({
          apiVersion: o.apiVersion,
          kind: o.kind,
          namespace: o.namespace ?? null,
          name: o.name,
          action: o.action,
          paths: o.paths,
        })),
      ),
      source,
    };
  }
}

/** The objects of Fleet's generated workload, as a list. */
function generatedObjects(
  manifests: NonNullable<
    Awaited<ReturnType<DesiredStates['desiredFor']>>['manifests']
  >,
): KubernetesObject[] {
  return [
    manifests.deployment,
    manifests.service,
    ...(manifests.podDisruptionBudget ? [manifests.podDisruptionBudget] : []),
    ...(manifests.ingress ? [manifests.ingress] : []),
  ];
}
