import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectRef } from './objectRefs';

/** The objects of one entity Fleet puts on one cluster. */
export interface ObjectSetTarget {
  /** The entity the objects are Fleet's for; every object carries Fleet's marks for it. */
  entityRef: string;
  /** Namespaced objects name their namespace (`metadata.namespace`). */
  objects: KubernetesObject[];
  /**
   * The objects the cluster's current revision applied: those the new set drops are pruned,
   * when they are still Fleet's for this entity.
   */
  previous?: KubernetesObject[];
}

export interface ObjectSetApplyOptions {
  /**
   * Objects whose `spec.replicas` something else owns (an HPA, or `/spec/replicas` in the
   * application's ignoreDifferences): the apply keeps their live count. Objects an HPA of the set
   * scales count too without being named here.
   */
  ignoreReplicasOf?: ObjectRef[];
  /**
   * For a preview: whether the deploy would create a namespace the objects name before it
   * applies them, when it is not there. The objects in one it would create are `create`, as for
   * a Namespace of the set, since the server cannot try them before it is there.
   */
  createsNamespace?: (namespace: string) => Promise<boolean>;
}

/** An object the answer is about (the one in the way, the one that failed). */
export interface ObjectSetFailure {
  kind: 'failed';
  message: string;
  object?: ObjectRef;
}

export type ObjectSetApplyResult =
  | { kind: 'applied'; pruned: ObjectRef[] }
  | { kind: 'not-configured'; message: string }
  | (ObjectSetFailure & { reason?: 'OWNERSHIP_CONFLICT' });

/** What applying an object would do, and the fields it would change (JSON pointers). */
export interface ObjectChange extends ObjectRef {
  action: 'create' | 'update' | 'unchanged' | 'prune';
  /** `/` for a create or a prune; none when unchanged. */
  paths: string[];
}

export type ObjectSetPreview =
  | { kind: 'previewed'; objects: ObjectChange[] }
  | { kind: 'refused'; message: string; object?: ObjectRef }
  | { kind: 'unreachable'; message: string }
  | ObjectSetFailure;

export type LiveObjectSet =
  | { kind: 'read'; live: Array<KubernetesObject | undefined> }
  | { kind: 'unreachable'; message: string }
  | ObjectSetFailure;

export type ObjectSetRemoval =
  | {
      kind: 'removed';
      /** Deleted now. */
      removed: ObjectRef[];
      /** There and not Fleet's for the entity: left as they are. */
      left: ObjectRef[];
    }
  | { kind: 'unreachable' | 'not-configured'; message: string }
  | ObjectSetFailure;
