/**
 * The in-memory object store of one simulated cluster, with the semantics of the API server's
 * generic registry: resourceVersion (one increasing counter per cluster), uid,
 * creationTimestamp, generation (bumped only when the object outside metadata/status changes),
 * status subresources, no-op writes that change nothing (not even resourceVersion), optimistic
 * concurrency, defaulting, validation, managedFields, finalizers and Service IP/port allocation
 * (serviceAddresses.ts). This file has the API writes; the state, the reads and the lazily
 * computed work of the controllers are in storeCore.ts.
 */
import { randomUUID } from 'node:crypto';
import { configMapDecodeProblem } from './configAndAccess';
import { applyDefaults, initialStatus } from './defaults';
import { cause, errors } from './errors';
import { trackManagedFields } from './managedFields';
import { applyPatch, PatchType } from './patch';
import { canonicalizeQuantities } from './quantity';
import {
  checkPreconditions,
  decodeBody,
  invalid,
  nameMismatch,
} from './requestBody';
import { apiVersionOf, ResourceDef } from './resourceDef';
import { CRDS_SHIPPED_WITH, resourceForKind } from './resources';
import { currentRevisionOf } from './podWorkloadStatus';
import { applyRolloutStatusWrite } from './rollouts';
import { cloneRolloutState, newRolloutState } from './rolloutState';
import { secretDecodeProblem } from './secretsAndIngresses';
import { StoreCore } from './storeCore';
import {
  availableOf,
  Entry,
  GENERATE_ALPHABET,
  generationRelevant,
  hasRolloutClock,
  keyOf,
  metaOf,
  out,
  SimObject,
  WriteOptions,
  WriteResult,
  WriteVerb,
} from './storeTypes';
import {
  asArray,
  asObject,
  clone,
  deepEqual,
  JsonObject,
  rfc3339,
} from './util';
import { updateBase } from './updateBase';
import { validateStored } from './validateStored';
import { RolloutClock } from './workloads';

export type {
  HistoryEntry,
  HistoryFilter,
  ListQuery,
  SimList,
  SimObject,
  WriteOptions,
  WriteResult,
  WriteVerb,
} from './storeTypes';
export { HISTORY_LIMIT } from './storeTypes';

export class ClusterStore extends StoreCore {
  constructor(readyDelayMs: number, now: () => number = Date.now) {
    super(readyDelayMs, now);
    for (const ns of [
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
    ]) {
      this.seed('Namespace', { metadata: { name: ns } });
    }
    this.seed('Service', {
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { component: 'apiserver', provider: 'kubernetes' },
      },
      spec: {
        clusterIP: '10.96.0.1',
        clusterIPs: ['10.96.0.1'],
        ports: [
          { name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 },
        ],
      },
    });
  }

  private seeding = false;

  private seed(kind: string, body: JsonObject) {
    const def = resourceForKind(kind)!;
    const ns = def.namespaced
      ? String(asObject(body.metadata)?.namespace)
      : undefined;
    this.seeding = true;
    try {
      this.create(def, ns, body, {});
    } finally {
      this.seeding = false;
    }
  }

  /**
   * Installs or removes a CRD; removing it deletes its objects, as on a real
   * cluster. Argo Rollouts ships `rollouts.argoproj.io` together with
   * `analysistemplates.argoproj.io`, Istio its VirtualService CRD with the
   * DestinationRule one: switching the first switches both.
   */
  setCrdInstalled(crd: string, installed: boolean): void {
    const names = CRDS_SHIPPED_WITH[crd] ?? [crd];
    for (const name of names) {
      if (installed) {
        this.crds.add(name);
        continue;
      }
      this.crds.delete(name);
      for (const entry of [...this.entries.values()]) {
        if (entry.def.crd === name) this.dropEntry(entry);
      }
    }
  }

  /** Assigns a Service's addresses (422 when it can't); returns what commits them. */
  private allocateService(
    def: ResourceDef,
    obj: JsonObject,
    old: JsonObject | undefined,
    name: string,
  ): () => void {
    const { causes, commit } = this.services.allocate(def, obj, old);
    if (causes.length) throw invalid(def, name, causes);
    return commit;
  }

  create(
    def: ResourceDef,
    namespace: string | undefined,
    body: unknown,
    opts: WriteOptions,
  ): SimObject {
    this.tick();
    const obj = decodeBody(def, namespace, body);
    const meta = metaOf(obj);
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
      throw errors.badRequest(
        'resourceVersion should not be set on objects to be created',
      );
    }
    if (
      (meta.name === undefined || meta.name === '') &&
      typeof meta.generateName === 'string' &&
      meta.generateName
    ) {
      let suffix = '';
      for (let i = 0; i < 5; i++)
        suffix +=
          GENERATE_ALPHABET[
            Math.floor(Math.random() * GENERATE_ALPHABET.length)
          ];
      meta.name = `${meta.generateName}${suffix}`;
    }
    const name = typeof meta.name === 'string' ? meta.name : '';
    if (def.namespaced) {
      if (!namespace || !this.namespaceExists(namespace)) {
        throw errors.notFound('namespaces', '', namespace ?? '');
      }
      meta.namespace = namespace;
    } else {
      delete meta.namespace;
    }
    obj.apiVersion = apiVersionOf(def);
    obj.kind = def.kind;
    const now = this.now();
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(now);
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.managedFields;
    delete meta.selfLink;
    if (def.hasGeneration) meta.generation = 1;
    else delete meta.generation;
    delete obj.status;
    applyDefaults(def, obj);
    validateStored(def, obj, undefined, this.validation(opts));
    trackManagedFields(def, undefined, obj, opts);
    if (this.find(def, namespace, name))
      throw errors.alreadyExists(def.plural, def.group, name);
    const commitAllocations = this.allocateService(def, obj, undefined, name);
    initialStatus(def, obj);
    const entry: Entry = { def, obj, createdAt: now };
    if (hasRolloutClock(def)) {
      entry.clock = {
        generation: 1,
        startedAt: now,
        prevAvailable: 0,
        templateChanged: true,
        done: false,
      };
    }
    if (def.kind === 'Rollout') entry.ro = newRolloutState(now);
    if (entry.clock) this.refreshWorkloadStatus(entry, now);
    if (opts.dryRun) return out(obj);
    commitAllocations();
    meta.resourceVersion = this.bump();
    this.entries.set(keyOf(def, namespace, name), entry);
    if (!this.seeding) this.record('create', obj);
    this.emit('ADDED', def, obj);
    return out(obj);
  }

  replace(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    body: unknown,
    opts: WriteOptions,
  ): WriteResult {
    this.tick();
    const entry = this.find(def, namespace, name);
    if (!entry) {
      if (def.allowCreateOnUpdate && !opts.subresource) {
        const candidate = decodeBody(def, namespace, body);
        const meta = metaOf(candidate);
        if (meta.name !== undefined && meta.name !== name)
          throw nameMismatch(meta.name, name);
        meta.name = name;
        delete meta.resourceVersion;
        return {
          object: this.create(def, namespace, candidate, opts),
          created: true,
        };
      }
      throw errors.notFound(def.plural, def.group, name);
    }
    const candidate = decodeBody(def, namespace, body);
    const meta = metaOf(candidate);
    if (meta.name !== undefined && meta.name !== '' && meta.name !== name) {
      throw nameMismatch(meta.name, name);
    }
    const rv = meta.resourceVersion;
    const stored = String(metaOf(entry.obj).resourceVersion);
    if (rv !== undefined && rv !== '' && rv !== stored) {
      throw errors.conflict(
        def.plural,
        def.group,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    if ((rv === undefined || rv === '') && !def.builtin) {
      throw invalid(def, name, [
        cause.invalid(
          'metadata.resourceVersion',
          '0x0',
          'must be specified for an update',
        ),
      ]);
    }
    return {
      object: this.commitUpdate(
        entry,
        candidate,
        opts,
        opts.subresource ? 'status' : 'update',
      ),
      created: false,
    };
  }

  patch(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patchBody: unknown,
    opts: WriteOptions,
  ): SimObject {
    this.tick();
    const entry = this.mustGet(def, namespace, name);
    const patched = applyPatch(clone(entry.obj), type, patchBody);
    const problem =
      canonicalizeQuantities(def, patched) ??
      secretDecodeProblem(def, patched) ??
      configMapDecodeProblem(def, patched);
    if (problem) {
      // What the API server answers when the patched object does not decode:
      // Invalid, with no kind or name, showing the whole patched object (as
      // JSON here; a strategic merge patch shows a Go map there).
      throw errors.invalid('', '', '', [
        cause.invalid('patch', JSON.stringify(patched), problem),
      ]);
    }
    const meta = metaOf(patched);
    if (meta.name !== name) throw nameMismatch(meta.name, name);
    const rv = meta.resourceVersion;
    if (
      rv !== undefined &&
      rv !== '' &&
      rv !== metaOf(entry.obj).resourceVersion
    ) {
      throw errors.conflict(
        def.plural,
        def.group,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    if (def.namespaced && meta.namespace !== namespace) {
      throw errors.badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    if (patched.apiVersion !== apiVersionOf(def) || patched.kind !== def.kind) {
      throw errors.badRequest(
        'apiVersion and kind cannot be changed by a patch',
      );
    }
    return this.commitUpdate(
      entry,
      patched,
      opts,
      opts.subresource ? 'status' : 'patch',
    );
  }

  /** The common end of PUT and PATCH: keep system fields, default, validate, bump. */
  protected commitUpdate(
    entry: Entry,
    candidate: JsonObject,
    opts: WriteOptions,
    verb?: WriteVerb,
  ): SimObject {
    const { def } = entry;
    const old = entry.obj;
    const oldMeta = metaOf(old);
    const next = updateBase(def, old, candidate, opts.subresource === 'status');
    const meta = metaOf(next);
    const name = String(oldMeta.name);
    let commitAllocations = () => {};
    if (opts.subresource !== 'status') {
      applyDefaults(def, next);
      this.services.retain(def, next, old);
      validateStored(def, next, old, this.validation(opts));
      commitAllocations = this.allocateService(def, next, old, name);
    }
    trackManagedFields(def, old, next, opts);
    const specChanged = !deepEqual(
      generationRelevant(old),
      generationRelevant(next),
    );
    if (def.hasGeneration && specChanged)
      meta.generation = Number(oldMeta.generation ?? 0) + 1;
    if (deepEqual(old, next)) return out(old); // a no-op write changes nothing
    const now = this.now();
    const pendingClock: RolloutClock | undefined =
      entry.clock && meta.generation !== entry.clock.generation
        ? {
            generation: Number(meta.generation),
            startedAt: now,
            prevAvailable: availableOf(old),
            templateChanged: !deepEqual(
              asObject(old.spec)?.template,
              asObject(next.spec)?.template,
            ),
            done: false,
            prevStatus: clone(asObject(old.status)),
            prevRevision: currentRevisionOf(old),
          }
        : entry.clock && { ...entry.clock };
    const pendingRo = entry.ro && cloneRolloutState(entry.ro);
    if (pendingRo && opts.subresource === 'status') {
      // The Argo controller reads what promote/abort wrote at its next reconcile.
      applyRolloutStatusWrite(pendingRo, next.status, now);
    }
    if (opts.dryRun) {
      if (pendingClock)
        this.refreshWorkloadStatus(
          { def, obj: next, clock: pendingClock, ro: pendingRo },
          now,
        );
      return out(next);
    }
    commitAllocations();
    if (
      def.kind === 'Service' &&
      asObject(next.spec)?.type === 'LoadBalancer' &&
      asObject(old.spec)?.type !== 'LoadBalancer'
    )
      entry.loadBalancerRequestedAt = now; // provisioned readyDelayMs from now
    entry.obj = next;
    entry.clock = pendingClock;
    entry.ro = pendingRo;
    if (entry.clock) this.refreshWorkloadStatus(entry, now);
    meta.resourceVersion = this.bump();
    if (verb) this.record(verb, next);
    if (meta.deletionTimestamp && asArray(meta.finalizers).length === 0) {
      // The last finalizer is gone: the object goes away with this write.
      this.removeEntry(entry);
      this.emit('DELETED', def, next, old);
    } else {
      this.emit('MODIFIED', def, next, old);
    }
    return out(next);
  }

  delete(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    options: unknown,
    opts: WriteOptions,
  ): { object?: SimObject; status?: JsonObject } {
    this.tick();
    const entry = this.mustGet(def, namespace, name);
    const meta = metaOf(entry.obj);
    checkPreconditions(def, name, meta, options);
    const terminating = clone(entry.obj);
    const tmeta = metaOf(terminating);
    tmeta.deletionTimestamp = tmeta.deletionTimestamp ?? rfc3339(this.now());
    tmeta.deletionGracePeriodSeconds = 0;
    if (def.kind === 'Namespace') {
      terminating.status = { phase: 'Terminating' };
      if (opts.dryRun) return { object: out(terminating) };
      for (const e of [...this.entries.values()]) {
        if (e.def.namespaced && metaOf(e.obj).namespace === name)
          this.dropEntry(e);
      }
      tmeta.resourceVersion = this.bump();
      this.removeEntry(entry);
      this.record('delete', terminating);
      this.emit('DELETED', def, terminating, entry.obj);
      return { object: out(terminating) };
    }
    if (asArray(meta.finalizers).length > 0) {
      if (opts.dryRun || meta.deletionTimestamp)
        return { object: out(terminating) };
      tmeta.resourceVersion = this.bump();
      const before = entry.obj;
      entry.obj = terminating;
      this.record('delete', terminating);
      this.emit('MODIFIED', def, terminating, before);
      return { object: out(terminating) };
    }
    if (!opts.dryRun) {
      tmeta.resourceVersion = this.bump();
      this.removeEntry(entry);
      this.record('delete', terminating);
      // A watch sees the last stored state, at the deletion's resourceVersion.
      const last = clone(entry.obj);
      metaOf(last).resourceVersion = tmeta.resourceVersion;
      this.emit('DELETED', def, last, entry.obj);
    }
    if (def.returnsDeletedObject) return { object: out(entry.obj) };
    return {
      status: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: {
          name,
          ...(def.group ? { group: def.group } : {}),
          kind: def.plural,
          uid: meta.uid,
        },
      },
    };
  }
}
