/*
 * The objects of a component's manifests as the reference rules look them up (by API group,
 * kind, namespace and name), and the loose readers those rules share.
 */
import type { ManifestObject } from './ProjectGuard';
import { groupOf } from './kinds';

export type Loose = Record<string, any>;

/** An object a reference names: its group, kind and name. */
export type Target = [group: string, kind: string, name: unknown];

/** The objects of the manifests, rendered for a cluster, by `group/Kind/namespace/name`. */
export type OwnObjects = ReadonlySet<string>;

/** An object's or a reference's key: the group decides which kind it is. */
export function key(
  group: string,
  kind: unknown,
  namespace: unknown,
  name: unknown,
): string {
  return `${group}/${String(kind)}/${String(namespace ?? '')}/${String(name)}`;
}

export function ownObjectsOf(objects: readonly ManifestObject[]): OwnObjects {
  return new Set(
    objects.map(o =>
      key(
        groupOf(o.kind, o.apiVersion),
        o.kind,
        o.metadata?.namespace,
        o.metadata?.name,
      ),
    ),
  );
}

export function isObject(value: unknown): value is Loose {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A name as Kubernetes reads it: an empty string is no name. */
export function nonEmpty(value: unknown): unknown {
  return value === '' || value === null ? undefined : value;
}
