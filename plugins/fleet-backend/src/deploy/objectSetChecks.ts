import type { KubernetesObject } from '@kubernetes/client-node';
import { dependencyOrder } from './dependencyOrder';
import { ENTITY_REF_ANNOTATION, MANAGED_BY_LABEL } from './manifests';
import { UnservedKindError, type ObjectClient } from './objectClient';
import { identityOf, refOf, type ObjectRef } from './objectRefs';
import { InvalidObjectError, ObjectError } from './objectSetErrors';
import type { ObjectSetTarget } from './objectSetTypes';
import { isFleetOwned } from './ownership';

/** The target's objects, checked (see `resolveObjects`), marked as Fleet's for it, each once. */
export async function checkedSet(
  client: ObjectClient,
  target: ObjectSetTarget,
): Promise<KubernetesObject[]> {
  const objects = (await resolveObjects(client, target.objects, 'fail')).map(
    o => o!,
  );
  const seen = new Set<string>();
  for (const object of objects) {
    const ref = refOf(object);
    if (!isFleetOwned(object, target.entityRef)) {
      throw new ObjectError(
        ref,
        new InvalidObjectError(
          `does not carry Fleet's marks for ${target.entityRef} (label ${MANAGED_BY_LABEL}: fleet and annotation ${ENTITY_REF_ANNOTATION}: ${target.entityRef})`,
        ),
      );
    }
    const identity = identityOf(ref);
    if (seen.has(identity))
      throw new ObjectError(ref, new InvalidObjectError('is in the set twice'));
    seen.add(identity);
  }
  return objects;
}

/**
 * The objects as they are sent: each names its apiVersion, kind and name, a namespaced one
 * its namespace; a cluster-scoped one goes without the namespace it may name. A kind the
 * cluster does not serve fails (`fail`) or gives undefined (`skip`: no such object there).
 */
export async function resolveObjects(
  client: ObjectClient,
  objects: readonly KubernetesObject[],
  unserved: 'fail' | 'skip',
): Promise<Array<KubernetesObject | undefined>> {
  for (const object of objects) {
    const ref = refOf(object);
    if (!ref.apiVersion || !ref.kind || !ref.name)
      throw new ObjectError(
        ref,
        new InvalidObjectError('needs an apiVersion, a kind and a name'),
      );
  }
  // One discovery request per apiVersion: its kinds are looked up one after another.
  const kindsByVersion = new Map<string, Set<string>>();
  for (const o of objects) {
    const kinds = kindsByVersion.get(o.apiVersion!) ?? new Set<string>();
    kinds.add(o.kind!);
    kindsByVersion.set(o.apiVersion!, kinds);
  }
  const scopes = new Map<string, { namespaced: boolean } | Error>();
  await Promise.all(
    [...kindsByVersion].map(async ([apiVersion, kinds]) => {
      for (const kind of kinds) {
        const scope = await client.scopeOf(apiVersion, kind).catch(error => {
          if (error instanceof UnservedKindError) return error;
          throw new ObjectError({ apiVersion, kind, name: '' }, error);
        });
        scopes.set(`${apiVersion}\u0000${kind}`, scope);
      }
    }),
  );
  return objects.map(object => {
    const scope = scopes.get(`${object.apiVersion}\u0000${object.kind}`)!;
    if (scope instanceof Error) {
      if (unserved === 'skip') return undefined;
      throw new ObjectError(refOf(object), scope);
    }
    const namespace = object.metadata?.namespace;
    if (scope.namespaced && !namespace)
      throw new ObjectError(
        refOf(object),
        new InvalidObjectError('is namespaced and names no namespace'),
      );
    if (scope.namespaced || !namespace) return object;
    const { namespace: _namespace, ...metadata } = object.metadata!;
    return { ...object, metadata };
  });
}

/** The indices of `objects` in dependency order. */
export function installOrder(objects: readonly KubernetesObject[]): number[] {
  return dependencyOrder(
    objects.map((o, index) => ({ kind: o.kind, index })),
  ).map(o => o.index);
}

/**
 * The identities of the objects whose replica count Fleet leaves as it is live: those named,
 * and those an HPA of the set scales (its `scaleTargetRef`, in its namespace).
 */
export function replicasIgnored(
  objects: readonly KubernetesObject[],
  named: readonly ObjectRef[] = [],
): Set<string> {
  const ignored = new Set(named.map(identityOf));
  for (const object of objects) {
    if (object.kind !== 'HorizontalPodAutoscaler') continue;
    const target = (
      object as {
        spec?: {
          scaleTargetRef?: {
            apiVersion?: string;
            kind?: string;
            name?: string;
          };
        };
      }
    ).spec?.scaleTargetRef;
    if (!target?.kind || !target.name) continue;
    ignored.add(
      identityOf({
        apiVersion: target.apiVersion ?? '',
        kind: target.kind,
        namespace: object.metadata?.namespace,
        name: target.name,
      }),
    );
  }
  return ignored;
}
