import type {
  ConfigurationOptions,
  KubeConfig,
  KubernetesObject,
} from '@kubernetes/client-node';
import type {
  ClusterAccess,
  ClusterClients,
} from '../kubernetes/ClusterClients';
import {
  ObjectAppearedError,
  serverSideApply,
  type ApplyCalls,
} from '../kubernetes/serverSideApply';
import { changedPaths } from './changedPaths';
import { dependencyOrder, rankGroups } from './dependencyOrder';
import { eachBounded } from './eachBounded';
import { ObjectClient, type DiscoveryCache } from './objectClient';
import { identityOf, refOf, type ObjectRef } from './objectRefs';
import {
  checkedSet,
  installOrder,
  replicasIgnored,
  resolveObjects,
} from './objectSetChecks';
import {
  about,
  assertAllOwned,
  assertOwned,
  describeFailure,
  isUnreachable,
} from './objectSetErrors';
import type {
  LiveObjectSet,
  ObjectChange,
  ObjectSetApplyOptions,
  ObjectSetApplyResult,
  ObjectSetFailure,
  ObjectSetPreview,
  ObjectSetRemoval,
  ObjectSetTarget,
} from './objectSetTypes';
import {
  OWNERSHIP_CONFLICT,
  OwnershipConflictError,
  deleteIfFleetOwned,
  isFleetOwned,
} from './ownership';
import { withReplicasLeftTo } from './replicas';

export type { ObjectRef } from './objectRefs';
export type * from './objectSetTypes';
export { dependencyOrder } from './dependencyOrder';

/** The calls of one cluster, each with its own options (pooled agent, timeout). */
interface Session {
  options: () => ConfigurationOptions;
  client(options?: ConfigurationOptions): ObjectClient;
}

/**
 * Puts the objects of one entity, of any kind, on one cluster through client-node's generic
 * object API (each kind's path and scope found by API discovery), as Fleet puts its own: by
 * server-side apply as field manager `fleet` (`serverSideApply`), and only over objects that
 * are Fleet's for the entity (`deploy/ownership.ts`). Objects go in dependency order
 * (`dependencyOrder`), those of one kind a few at a time; objects the entity no longer has go
 * in the reverse order. Fleet never creates a namespace here, nor forces another manager's
 * field.
 */
export class ObjectSetApplier {
  /** Each cluster's discovery answers, for as long as its client is the same. */
  private readonly discovery = new WeakMap<KubeConfig, DiscoveryCache>();

  private constructor(
    private readonly clients: Pick<ClusterClients, 'kubeConfigFor'>,
    private readonly requestTimeoutMs: number,
    private readonly concurrency: number,
  ) {}

  static create(options: {
    clients: Pick<ClusterClients, 'kubeConfigFor'>;
    /** How long one request to a cluster may take (default 15 s). */
    requestTimeoutMs?: number;
    /** How many objects of one kind are written at once (default 8). */
    concurrency?: number;
  }): ObjectSetApplier {
    return new ObjectSetApplier(
      options.clients,
      options.requestTimeoutMs ?? 15_000,
      Math.max(1, options.concurrency ?? 8),
    );
  }

  /**
   * Applies the set. First every object's live counterpart is read: one that is there and not
   * Fleet's for the entity fails the apply (`OWNERSHIP_CONFLICT`, naming it) before anything is
   * written. Then each object is created, or applied over its live one, kind after kind in
   * dependency order; then the previous objects the set drops are deleted in the reverse order,
   * those still Fleet's for the entity only. A kind the cluster does not serve, a missing
   * namespace, or a field another manager holds fails the apply with what the server said.
   */
  async apply(
    cluster: ClusterAccess,
    target: ObjectSetTarget,
    options: ObjectSetApplyOptions = {},
  ): Promise<ObjectSetApplyResult> {
    const loaded = await this.clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable')
      return { kind: 'not-configured', message: loaded.reason };
    const session = this.session(loaded);
    try {
      const { objects, lives, ignored } = await this.prepare(
        session,
        target,
        options,
      );
      const order = installOrder(objects);
      for (const group of rankGroups(order, i => objects[i].kind)) {
        await eachBounded(group, this.concurrency, i =>
          about(refOf(objects[i]), () =>
            this.applyOne(
              session,
              objects[i],
              lives[i],
              target.entityRef,
              ignored.has(identityOf(refOf(objects[i]))),
            ),
          ),
        );
      }
      const pruned = await this.prune(session, target, objects);
      return { kind: 'applied', pruned };
    } catch (error) {
      const failure = describeFailure(error, this.requestTimeoutMs);
      return {
        kind: 'failed',
        message: failure.message,
        ...(failure.cause instanceof OwnershipConflictError
          ? { reason: OWNERSHIP_CONFLICT }
          : {}),
        ...(failure.object ? { object: failure.object } : {}),
      };
    }
  }

  /**
   * What `apply` would do, asked of the server by a dry run (`dryRun=All`) of every object,
   * which writes nothing: `create` for an object not there, else `update` with the fields the
   * apply changes (the dry run's answer compared with the live object, bookkeeping and status
   * left out; a field Fleet stops sending and that goes counts too) or `unchanged`; then
   * `prune` for each previous object the set drops that is there and Fleet's for the entity.
   * A foreign object in the way: `refused`, with the `OWNERSHIP_CONFLICT` message.
   */
  async preview(
    cluster: ClusterAccess,
    target: ObjectSetTarget,
    options: ObjectSetApplyOptions = {},
  ): Promise<ObjectSetPreview> {
    const loaded = await this.clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable')
      return { kind: 'unreachable', message: loaded.reason };
    const session = this.session(loaded);
    try {
      const { objects, lives, ignored } = await this.prepare(
        session,
        target,
        options,
      );
      // Objects in a namespace the set or the deploy creates cannot be tried before it is there.
      const newNamespaces = new Set(
        objects
          .filter((o, i) => o.kind === 'Namespace' && !lives[i])
          .map(o => o.metadata?.name),
      );
      for (const namespace of await this.namespacesCreated(
        session,
        objects,
        options.createsNamespace,
      ))
        newNamespaces.add(namespace);
      const order = installOrder(objects);
      const changes = await eachBounded(order, this.concurrency, i => {
        const object = objects[i];
        const live = lives[i];
        const ref = refOf(object);
        return about(ref, async (): Promise<ObjectChange> => {
          if (!live && newNamespaces.has(object.metadata?.namespace))
            return { ...ref, action: 'create', paths: ['/'] };
          const body =
            live && ignored.has(identityOf(ref))
              ? withReplicasLeftTo(object, live)
              : object;
          const after = await serverSideApply(
            body,
            live,
            this.calls(session, object, 'All'),
            session.options,
          );
          if (!live) return { ...ref, action: 'create', paths: ['/'] };
          const paths = changedPaths(after, live);
          return {
            ...ref,
            action: paths.length ? 'update' : 'unchanged',
            paths,
          };
        });
      });
      const dropped = await this.droppedObjects(session, target, objects);
      const prunes = await eachBounded(dropped, this.concurrency, object =>
        about(refOf(object), async () => {
          const live = await session.client().readIfThere(object);
          return isFleetOwned(live, target.entityRef)
            ? [{ ...refOf(object), action: 'prune' as const, paths: ['/'] }]
            : [];
        }),
      );
      return { kind: 'previewed', objects: [...changes, ...prunes.flat()] };
    } catch (error) {
      const failure = describeFailure(error, this.requestTimeoutMs);
      const object = failure.object ? { object: failure.object } : {};
      if (failure.cause instanceof OwnershipConflictError)
        return { kind: 'refused', message: failure.message, ...object };
      if (isUnreachable(failure.cause))
        return { kind: 'unreachable', message: failure.message };
      return { kind: 'failed', message: failure.message, ...object };
    }
  }

  /**
   * The namespaces the objects name (not those of the set's own Namespaces) that are not there
   * and that the deploy would create (`createsNamespace`).
   */
  private async namespacesCreated(
    session: Session,
    objects: readonly KubernetesObject[],
    createsNamespace: ObjectSetApplyOptions['createsNamespace'],
  ): Promise<string[]> {
    if (!createsNamespace) return [];
    const own = new Set(
      objects.filter(o => o.kind === 'Namespace').map(o => o.metadata?.name),
    );
    const named = [
      ...new Set(
        objects.flatMap(o =>
          o.metadata?.namespace && !own.has(o.metadata.namespace)
            ? [o.metadata.namespace]
            : [],
        ),
      ),
    ];
    const created = await eachBounded(named, this.concurrency, async name =>
      (await createsNamespace(name)) &&
      !(await session.client().readIfThere({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name },
      }))
        ? [name]
        : [],
    );
    return created.flat();
  }

  /**
   * Reads every object's live counterpart, in the order given: undefined when there is none,
   * or when the cluster does not serve its kind.
   */
  async readLive(
    cluster: ClusterAccess,
    objects: KubernetesObject[],
  ): Promise<LiveObjectSet> {
    const loaded = await this.clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable')
      return { kind: 'unreachable', message: loaded.reason };
    const session = this.session(loaded);
    try {
      const resolved = await resolveObjects(session.client(), objects, 'skip');
      const live = await eachBounded(resolved, this.concurrency, object =>
        object
          ? about(refOf(object), () => session.client().readIfThere(object))
          : Promise.resolve(undefined),
      );
      return { kind: 'read', live };
    } catch (error) {
      return this.unreachableOrFailed(error);
    }
  }

  /**
   * Deletes the objects that are there and Fleet's for `entityRef`, kind after kind in the
   * reverse of dependency order (each delete conditional on the object read, see
   * `deleteIfFleetOwned`). Foreign objects are left as they are and reported; absent ones, and
   * those of a kind the cluster does not serve, are neither.
   */
  async remove(
    cluster: ClusterAccess,
    entityRef: string,
    objects: KubernetesObject[],
  ): Promise<ObjectSetRemoval> {
    const loaded = await this.clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable')
      return { kind: 'not-configured', message: loaded.reason };
    const session = this.session(loaded);
    try {
      const resolved = (
        await resolveObjects(session.client(), objects, 'skip')
      ).filter((o): o is KubernetesObject => o !== undefined);
      const outcome = await this.deleteOwned(session, entityRef, resolved);
      return { kind: 'removed', ...outcome };
    } catch (error) {
      return this.unreachableOrFailed(error);
    }
  }

  /**
   * What an apply and its preview start from: the set checked, every object's live counterpart
   * read and found absent or Fleet's for the entity (else an `OwnershipConflictError`), and the
   * objects whose replica count is left to what scales them.
   */
  private async prepare(
    session: Session,
    target: ObjectSetTarget,
    options: ObjectSetApplyOptions,
  ) {
    const objects = await checkedSet(session.client(), target);
    const lives = await this.readAll(session, objects);
    assertAllOwned(objects, lives, target.entityRef);
    return {
      objects,
      lives,
      ignored: replicasIgnored(objects, options.ignoreReplicasOf),
    };
  }

  private session(loaded: {
    kubeConfig: KubeConfig;
    requestOptions: (timeoutMs: number) => ConfigurationOptions;
  }): Session {
    const kc = loaded.kubeConfig;
    let discovery = this.discovery.get(kc);
    if (!discovery) {
      discovery = {};
      this.discovery.set(kc, discovery);
    }
    const cache = discovery;
    const options = () => loaded.requestOptions(this.requestTimeoutMs);
    return {
      options,
      client: (given = options()) => ObjectClient.for(kc, given, cache),
    };
  }

  /** `serverSideApply`'s calls for `object`, on the generic API; dry runs with `dryRun`. */
  private calls(
    session: Session,
    object: KubernetesObject,
    dryRun?: 'All',
  ): ApplyCalls<KubernetesObject> {
    return {
      patch: (params, options) =>
        session.client(options).patchObject(object, params.body, {
          fieldManager: params.fieldManager,
          fieldValidation: params.fieldValidation,
          force: params.force,
          dryRun,
        }),
      create: (params, options) =>
        session.client(options).createObject(params.body, {
          fieldManager: params.fieldManager,
          fieldValidation: params.fieldValidation,
          dryRun,
        }),
    };
  }

  /**
   * Applies one object over `live` (checked as Fleet's already). One that appeared while Fleet
   * was creating it, or was replaced meanwhile, is read and checked again, and applied once more.
   */
  private async applyOne(
    session: Session,
    object: KubernetesObject,
    live: KubernetesObject | undefined,
    entityRef: string,
    keepReplicas: boolean,
  ): Promise<void> {
    const once = (current: KubernetesObject | undefined) =>
      serverSideApply(
        current && keepReplicas ? withReplicasLeftTo(object, current) : object,
        current,
        this.calls(session, object),
        session.options,
      );
    try {
      await once(live);
    } catch (error) {
      if (!(error instanceof ObjectAppearedError)) throw error;
      const again = await session.client().readIfThere(object);
      assertOwned(object, again, entityRef);
      await once(again);
    }
  }

  private readAll(
    session: Session,
    objects: readonly KubernetesObject[],
  ): Promise<Array<KubernetesObject | undefined>> {
    return eachBounded(objects, this.concurrency, object =>
      about(refOf(object), () => session.client().readIfThere(object)),
    );
  }

  /** The previous objects the set drops, of kinds the cluster serves. */
  private async droppedObjects(
    session: Session,
    target: ObjectSetTarget,
    objects: readonly KubernetesObject[],
  ): Promise<KubernetesObject[]> {
    const kept = new Set(objects.map(o => identityOf(refOf(o))));
    const previous = await resolveObjects(
      session.client(),
      target.previous ?? [],
      'skip',
    );
    return previous.filter(
      (o): o is KubernetesObject =>
        o !== undefined && !kept.has(identityOf(refOf(o))),
    );
  }

  /** Deletes the previous objects the set drops; answers those deleted. */
  private async prune(
    session: Session,
    target: ObjectSetTarget,
    objects: readonly KubernetesObject[],
  ): Promise<ObjectRef[]> {
    const dropped = await this.droppedObjects(session, target, objects);
    return (await this.deleteOwned(session, target.entityRef, dropped)).removed;
  }

  /** Deletes those of `objects` that are Fleet's for `entityRef`, in reverse dependency order. */
  private async deleteOwned(
    session: Session,
    entityRef: string,
    objects: readonly KubernetesObject[],
  ): Promise<{ removed: ObjectRef[]; left: ObjectRef[] }> {
    const removed: ObjectRef[] = [];
    const left: ObjectRef[] = [];
    const order = dependencyOrder(objects).reverse();
    for (const group of rankGroups(order, o => o.kind)) {
      await eachBounded(group, this.concurrency, object =>
        about(refOf(object), async () => {
          const outcome = await deleteIfFleetOwned(
            entityRef,
            () => session.client().readObject(object),
            preconditions =>
              session.client().deleteObject(object, {
                ...preconditions,
                propagationPolicy: 'Background',
              }),
          );
          if (outcome === 'deleted') removed.push(refOf(object));
          if (outcome === 'foreign') left.push(refOf(object));
        }),
      );
    }
    return { removed, left };
  }

  private unreachableOrFailed(
    error: unknown,
  ): { kind: 'unreachable'; message: string } | ObjectSetFailure {
    const failure = describeFailure(error, this.requestTimeoutMs);
    if (isUnreachable(failure.cause))
      return { kind: 'unreachable', message: failure.message };
    return {
      kind: 'failed',
      message: failure.message,
      ...(failure.object ? { object: failure.object } : {}),
    };
  }
}
