import { createHash } from 'node:crypto';
import { InputError } from '@backstage/errors';
import {
  FLEET_ANNOTATION_WORKLOAD,
  type ApplicationPlacement,
  type ManifestPatch,
} from '@cnp/plugin-fleet-common';
import type {
  KubernetesObject,
  V1Deployment,
  V1Service,
} from '@kubernetes/client-node';
import type { ClusterRecord } from '../database/types';
import { matchesSelector } from '../kubernetes/labelSelector';
import { jsonMergePatch } from '../util/jsonMergePatch';
import { withFleetMarks } from './fleetMarks';
import {
  KUBERNETES_ID_LABEL,
  kubernetesIdOf,
  type Manifests,
} from './manifests';

/**
 * The kinds that live outside namespaces (of the built-in API groups); every other kind is taken
 * as namespaced and goes to the application's namespace when it names none.
 */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'StorageClass',
  'CSIDriver',
  'CSINode',
  'VolumeAttachment',
  'IngressClass',
  'RuntimeClass',
  'PriorityClass',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'APIService',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'CertificateSigningRequest',
  'FlowSchema',
  'PriorityLevelConfiguration',
]);

/** Kinds whose pods Fleet labels with `backstage.io/kubernetes-id`, and where their template is. */
const POD_TEMPLATE_PATHS: Record<string, string[]> = {
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  Job: ['spec', 'template'],
  Rollout: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

/** The kinds a progressive release can steer. */
const STEERABLE_KINDS = ['Deployment', 'Rollout'];

/** What `renderRepositoryObjects` renders for: one application on one cluster. */
export interface RepositoryRenderTarget {
  entityRef: string;
  /** The namespace of objects that name none. */
  namespace: string;
  placement?: ApplicationPlacement;
  cluster: Pick<ClusterRecord, 'name' | 'labels'>;
}

/** The patches of the placement's overrides that match `cluster`, in order. */
export function patchesFor(
  placement: ApplicationPlacement | undefined,
  cluster: Pick<ClusterRecord, 'name' | 'labels'>,
): ManifestPatch[] {
  return (placement?.overrides ?? []).flatMap(override => {
    const byName = override.clusters?.includes(cluster.name) ?? false;
    const bySelector =
      override.clusterSelector !== undefined &&
      matchesSelector(cluster.labels, override.clusterSelector);
    return byName || bySelector ? override.patches ?? [] : [];
  });
}

/**
 * A component's own manifests as Fleet applies them on one cluster: the placement's patches for
 * that cluster laid over their targets (JSON merge patches, in order), the application's
 * namespace given to namespaced objects that name none, and Fleet's marks on every object
 * (`app.kubernetes.io/managed-by: fleet` and `backstage.io/kubernetes-id` labels, the
 * `cnp.io/entity-ref` annotation; pod templates get the kubernetes-id label so the Kubernetes
 * tab finds their pods).
 *
 * A patch whose target is not among the objects, or two objects of one kind, namespace and name,
 * is an `InputError`; an object that claims another owner is an `OwnershipConflictError`.
 */
export function renderRepositoryObjects(
  objects: readonly KubernetesObject[],
  target: RepositoryRenderTarget,
): KubernetesObject[] {
  let rendered = objects.map(object => structuredClone(object));
  for (const { target: at, patch } of patchesFor(
    target.placement,
    target.cluster,
  )) {
    const index = rendered.findIndex(
      o => o.kind === at.kind && o.metadata?.name === at.name,
    );
    if (index < 0) {
      throw new InputError(
        `A placement patch for cluster ${target.cluster.name} targets ${at.kind} '${at.name}', which the manifests do not hold`,
      );
    }
    rendered = rendered.map((o, i) =>
      i === index ? (jsonMergePatch(o, patch) as KubernetesObject) : o,
    );
  }
  const seen = new Set<string>();
  return rendered.map(object => {
    const marked = markedForCluster(object, target);
    const key = refKey(marked);
    if (seen.has(key)) {
      throw new InputError(
        `The manifests hold ${describeRef(marked)} twice: each object once`,
      );
    }
    seen.add(key);
    return marked;
  });
}

function markedForCluster(
  object: KubernetesObject,
  target: RepositoryRenderTarget,
): KubernetesObject {
  const kind = object.kind ?? '';
  const result = withFleetMarks(object, {
    entityRef: target.entityRef,
    namespace: CLUSTER_SCOPED_KINDS.has(kind)
      ? undefined
      : object.metadata?.namespace ?? target.namespace,
    rendered: 'the manifests hold',
  });
  const kubernetesId = kubernetesIdOf(target.entityRef);
  const templatePath = POD_TEMPLATE_PATHS[kind];
  if (templatePath) {
    let template: any = result;
    for (const key of templatePath) template = template?.[key];
    if (template && typeof template === 'object') {
      template.metadata = {
        ...template.metadata,
        labels: {
          ...template.metadata?.labels,
          [KUBERNETES_ID_LABEL]:
            template.metadata?.labels?.[KUBERNETES_ID_LABEL] ?? kubernetesId,
        },
      };
    }
  }
  return result;
}

/** `kind/namespace/name` of an object, the key of a set of objects. */
export function refKey(object: KubernetesObject): string {
  const group = (object.apiVersion ?? '').split('/').slice(0, -1).join('/');
  return `${group}|${object.kind}|${object.metadata?.namespace ?? ''}|${
    object.metadata?.name
  }`;
}

/** An object as messages name it: `ConfigMap payments/inventory-config`. */
export function describeRef(object: KubernetesObject): string {
  const namespace = object.metadata?.namespace;
  return `${object.kind} ${namespace ? `${namespace}/` : ''}${
    object.metadata?.name
  }`;
}

/** `sha256:<hex>` of the objects in a canonical JSON form (keys sorted). */
export function digestOf(objects: readonly KubernetesObject[]): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value as object)
          .sort()
          .map(key => [key, canonical((value as any)[key])]),
      );
    }
    return value;
  };
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(canonical(objects)))
    .digest('hex')}`;
}

/**
 * The workload a progressive release steers and whose image a revision records: the Deployment
 * or Rollout the entity's `cnp.io/workload` names, else the only one among the objects.
 * Undefined when there is none or more than one and the annotation names none.
 */
export function workloadOf(
  objects: readonly KubernetesObject[],
  annotations: Record<string, string> = {},
): KubernetesObject | undefined {
  const named = annotations[FLEET_ANNOTATION_WORKLOAD]?.trim();
  const candidates = objects.filter(o => STEERABLE_KINDS.includes(o.kind!));
  if (named) return candidates.find(o => o.metadata?.name === named);
  return candidates.length === 1 ? candidates[0] : undefined;
}

/** The first container image of an object's pod template, if it has one. */
export function imageOf(
  object: KubernetesObject | undefined,
): string | undefined {
  const path = object ? POD_TEMPLATE_PATHS[object.kind ?? ''] : undefined;
  if (!path) return undefined;
  let template: any = object;
  for (const key of path) template = template?.[key];
  const image = template?.spec?.containers?.[0]?.image;
  return typeof image === 'string' ? image : undefined;
}

/**
 * What a revision of manifests without any container image records as its image: where they
 * came from (`<url>@<commit>`).
 */
export function sourceLabelOf(set: { url: string; commit?: string }): string {
  return `${set.url}${set.commit ? `@${set.commit.slice(0, 12)}` : ''}`;
}

/** The image a revision of the manifests records: the workload's, else the first one found. */
export function recordedImageOf(
  objects: readonly KubernetesObject[],
  annotations: Record<string, string> = {},
): string | undefined {
  return (
    imageOf(workloadOf(objects, annotations)) ??
    objects.map(imageOf).find(image => image !== undefined)
  );
}

/**
 * The part of a component's own objects a progressive release steers, in the shape of Fleet's
 * generated workload: the workload (a Deployment named after the application, or the one
 * `cnp.io/workload` names) and the Service that selects its pods. An `InputError` says why
 * there is none.
 */
export function steeredWorkload(
  objects: readonly KubernetesObject[],
  name: string,
  annotations: Record<string, string> = {},
): Manifests {
  const workload = workloadOf(objects, annotations) as V1Deployment | undefined;
  if (!workload || workload.kind !== 'Deployment') {
    throw new InputError(
      `A progressive release steers one Deployment of the manifests: name it with ${FLEET_ANNOTATION_WORKLOAD}, or keep only one`,
    );
  }
  if (workload.metadata?.name !== name) {
    throw new InputError(
      `A progressive release steers the Deployment named after the application ('${name}'), not '${workload.metadata?.name}'`,
    );
  }
  const podLabels = workload.spec?.template?.metadata?.labels ?? {};
  const service = objects.find(
    o =>
      o.kind === 'Service' &&
      Object.entries((o as V1Service).spec?.selector ?? {}).length > 0 &&
      Object.entries((o as V1Service).spec?.selector ?? {}).every(
        ([key, value]) => podLabels[key] === value,
      ),
  ) as V1Service | undefined;
  if (!service) {
    throw new InputError(
      `A progressive release needs a Service of the manifests that selects the pods of Deployment '${name}'`,
    );
  }
  return { deployment: workload, service };
}
