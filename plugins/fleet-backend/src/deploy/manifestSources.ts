import type {
  KubernetesObject,
  V1Deployment,
  V1Ingress,
  V1PodDisruptionBudget,
  V1Service,
} from '@kubernetes/client-node';
import type { Application } from '@cnp/plugin-fleet-common';
import type { FleetManifestSource } from '@cnp/plugin-fleet-node';
import { withFleetMarks } from './fleetMarks';
import { serviceNameFor, type Manifests } from './manifests';
import { describeObject } from './ownership';

/**
 * The manifest sources of a Fleet backend: the ones modules added, in the order they were added,
 * then Fleet's generated workload, which applies to every application.
 */
export class ManifestSources {
  private constructor(
    private readonly added: readonly FleetManifestSource[],
    private readonly builtIn: FleetManifestSource,
  ) {}

  static create(options: {
    added?: readonly FleetManifestSource[];
    builtIn: FleetManifestSource;
  }): ManifestSources {
    const added = options.added ?? [];
    const ids = new Set([options.builtIn.id]);
    for (const source of added) {
      if (ids.has(source.id))
        throw new Error(`Duplicate Fleet manifest source id '${source.id}'`);
      ids.add(source.id);
    }
    return new ManifestSources([...added], options.builtIn);
  }

  /** The source of an application's objects: the first added one that applies, else the built-in. */
  sourceFor(
    application: Pick<Application, 'id' | 'entityRef' | 'name' | 'spec'>,
  ): FleetManifestSource {
    return this.added.find(s => s.appliesTo(application)) ?? this.builtIn;
  }
}

/** A source rendered objects Fleet cannot apply as an application's workload. */
export class ManifestSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestSourceError';
  }
}

/** The kinds an application's workload is made of, with the API group each must come from. */
const WORKLOAD_KINDS: Record<
  string,
  { apiVersion: string; key: keyof Manifests }
> = {
  Deployment: { apiVersion: 'apps/v1', key: 'deployment' },
  Service: { apiVersion: 'v1', key: 'service' },
  PodDisruptionBudget: {
    apiVersion: 'policy/v1',
    key: 'podDisruptionBudget',
  },
  Ingress: { apiVersion: 'networking.k8s.io/v1', key: 'ingress' },
};

/**
 * Turns the objects a source rendered into the application's workload, as Fleet applies,
 * follows, checks and removes it: one Deployment and one Service, at most one PodDisruptionBudget
 * and one Ingress, named as Fleet names them (the Service `serviceNameFor(name)`, the others
 * `name`) in `namespace`. Every object gets Fleet's ownership marks (`managed-by: fleet`,
 * `backstage.io/kubernetes-id`, the `cnp.io/entity-ref` annotation); one that claims another
 * owner is refused with an `OwnershipConflictError`, anything else Fleet cannot apply with a
 * `ManifestSourceError`.
 */
export function workloadFromObjects(
  objects: readonly KubernetesObject[],
  target: {
    sourceId: string;
    name: string;
    entityRef: string;
    namespace: string;
  },
): Manifests {
  const found: Partial<Manifests> = {};
  for (const object of objects) {
    const kind = object.kind ?? '';
    const known = WORKLOAD_KINDS[kind];
    const name = object.metadata?.name ?? '';
    const where = describeObject(kind || 'object', target.namespace, name);
    if (!known || object.apiVersion !== known.apiVersion) {
      throw new ManifestSourceError(
        `Manifest source '${target.sourceId}' rendered ${
          object.apiVersion
        }/${kind} '${name}': Fleet applies only ${Object.entries(WORKLOAD_KINDS)
          .map(([k, v]) => `${v.apiVersion}/${k}`)
          .join(', ')}`,
      );
    }
    const expected =
      kind === 'Service' ? serviceNameFor(target.name) : target.name;
    if (name !== expected) {
      throw new ManifestSourceError(
        `Manifest source '${target.sourceId}' rendered ${where}: the application's ${kind} must be named '${expected}'`,
      );
    }
    const namespace = object.metadata?.namespace;
    if (namespace !== undefined && namespace !== target.namespace) {
      throw new ManifestSourceError(
        `Manifest source '${target.sourceId}' rendered ${kind} ${namespace}/${name}: its objects go to namespace '${target.namespace}'`,
      );
    }
    if (found[known.key]) {
      throw new ManifestSourceError(
        `Manifest source '${target.sourceId}' rendered ${where} twice`,
      );
    }
    (found as Record<string, KubernetesObject>)[known.key] = withFleetMarks(
      object,
      {
        entityRef: target.entityRef,
        namespace: target.namespace,
        rendered: `manifest source '${target.sourceId}' rendered`,
      },
    );
  }
  const { deployment, service } = found;
  if (!deployment || !service) {
    throw new ManifestSourceError(
      `Manifest source '${target.sourceId}' rendered no ${
        deployment ? 'Service' : 'Deployment'
      } for '${
        target.entityRef
      }': an application's workload has one Deployment and one Service`,
    );
  }
  return {
    deployment: deployment as V1Deployment,
    service: service as V1Service,
    ...(found.podDisruptionBudget
      ? {
          podDisruptionBudget:
            found.podDisruptionBudget as V1PodDisruptionBudget,
        }
      : {}),
    ...(found.ingress ? { ingress: found.ingress as V1Ingress } : {}),
  };
}
