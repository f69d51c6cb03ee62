import { createExtensionPoint } from '@backstage/backend-plugin-api';
import type { Application, ApplicationSpec } from '@cnp/plugin-fleet-common';
import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * What a revision asks a cluster to run: the image, replicas, env, resources, namespace and port
 * a deploy or a rollback recorded, laid over the application's own settings.
 *
 * @public
 */
export type FleetManifestRevision = Pick<
  ApplicationSpec,
  'image' | 'replicas' | 'env' | 'resources' | 'namespace' | 'port'
>;

/**
 * What a manifest source renders the objects for: one revision of one application on one
 * cluster.
 *
 * @public
 */
export interface FleetManifestRenderRequest {
  /** The application: its entity ref, its Kubernetes name, its spec and placement. */
  application: Pick<Application, 'id' | 'entityRef' | 'name' | 'spec'>;
  /**
   * The application's spec with the revision's settings laid over it: what this revision runs.
   */
  spec: ApplicationSpec;
  /** The revision's own settings; undefined for a deployment recorded before revisions. */
  revision?: FleetManifestRevision;
  /**
   * The cluster the objects go to, with the Kubernetes version its last health probe saw
   * (`v1.30.2`; unknown before the first probe).
   */
  cluster: {
    name: string;
    labels?: Record<string, string>;
    serverVersion?: string | null;
  };
  /** The namespace the objects go to (the revision's, else Fleet's default). */
  namespace: string;
}

/**
 * Decides which Kubernetes objects Fleet applies for an application: Fleet's own generated
 * workload is one; a module may add others (say, versioned manifests read from the component's
 * repository).
 *
 * Fleet applies, follows, checks for drift and removes the objects a source renders as it does
 * its own workload: one Deployment named after the application (`application.name`, whose
 * rollout Fleet follows), one Service, and optionally a PodDisruptionBudget and an Ingress named
 * after the application, all in the request's namespace. Fleet labels every object
 * `app.kubernetes.io/managed-by: fleet` and `backstage.io/kubernetes-id`, and annotates it
 * `cnp.io/entity-ref` with the component's entity ref; an object that claims another owner, is
 * of another kind, or carries another name or namespace is refused and the deploy fails.
 *
 * @public
 */
export interface FleetManifestSource {
  /** A unique, stable id (`generated` is Fleet's own workload), named in messages. */
  readonly id: string;
  /** Whether this source renders the objects of `application` (say, by an annotation). */
  appliesTo(
    application: Pick<Application, 'id' | 'entityRef' | 'name' | 'spec'>,
  ): boolean;
  /** The objects to apply; a rejection fails the deploy with its message. */
  render(request: FleetManifestRenderRequest): Promise<KubernetesObject[]>;
}

/**
 * The interface for {@link fleetManifestSourcesExtensionPoint}.
 *
 * @public
 */
export interface FleetManifestSourcesExtensionPoint {
  /**
   * Adds manifest sources. For each application, Fleet uses the first added source that applies
   * to it, in the order they were added, else its own generated workload.
   */
  addManifestSource(...sources: FleetManifestSource[]): void;
}

/**
 * An extension point through which a backend module of the `fleet` plugin adds the sources of
 * the objects Fleet applies for an application.
 *
 * @public
 */
export const fleetManifestSourcesExtensionPoint =
  createExtensionPoint<FleetManifestSourcesExtensionPoint>({
    id: 'fleet.manifest-sources',
  });
