import type { KubernetesObject } from '@kubernetes/client-node';

/** One object of a set, by what names it on a cluster. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  /** Undefined for a cluster-scoped object. */
  namespace?: string;
  name: string;
}

/** The ref of `object`. */
export function refOf(object: KubernetesObject): ObjectRef {
  const namespace = object.metadata?.namespace;
  return {
    apiVersion: object.apiVersion ?? '',
    kind: object.kind ?? '',
    ...(namespace ? { namespace } : {}),
    name: object.metadata?.name ?? '',
  };
}

/** `Deployment shop/web`, or `Namespace shop` for a cluster-scoped object. */
export function describeRef(ref: ObjectRef): string {
  return ref.namespace
    ? `${ref.kind} ${ref.namespace}/${ref.name}`
    : `${ref.kind} ${ref.name}`;
}

/**
 * What one object is on a cluster whatever version names it: its API group, kind, namespace and
 * name (`autoscaling/v1` and `autoscaling/v2` HorizontalPodAutoscalers of one name are one).
 */
export function identityOf(ref: ObjectRef): string {
  const slash = ref.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
  return [group, ref.kind, ref.namespace ?? '', ref.name].join('\u0000');
}
