/**
 * The in-memory object store of one simulated cluster, with the semantics of
 * the API server's generic registry: resourceVersion (one increasing counter
 * per cluster), uid, creationTimestamp, generation (bumped only when the
 * object outside metadata/status changes), status subresources, no-op writes
 * that change nothing (not even resourceVersion), optimistic concurrency,
 * defaulting, validation, finalizers, Service IP/port allocation, and the
 * lazily computed work of the controllers (see workloads.ts).
 */
import { randomUUID } from 'node:crypto';
import { Allocator, clusterIpAllocator, nodePortAllocator } from './allocators';
import { ChangeLog, ChangeType, selectionOf } from './changeLog';
import { applyDefaults } from './defaults';
import { ApiError, cause, errors, StatusCause } from './errors';
import { applyPatch, PatchType } from './patch';
import { canonicalizeQuantities } from './quantity';
import { initialStatusOf, secretDecodeProblem } from './secretsAndIngresses';
import { apiVersionOf, ResourceDef } from './resourceDef';
import { RESOURCES, resourceForKind } from './resources';
import {
  matches,
  matchesFields,
  parseFieldSelector,
  parseLabelSelector,
  requirementsOf,
} from './selectors';
import {
  asArray,
  asObject,
  clone,
  deepEqual,
  isPlainObject,
  JsonObject,
  rfc3339,
} from './util';
import { validateName } from './metaValidation';
import { validateObject } from './validation';
import {
  deploymentStatus,
  hpaDesiredReplicas,
  pdbStatus,
  Readiness,
  RolloutClock,
  SelectedPods,
} from './workloads';
import { PodControllerHost, reconcilePods } from './podController';
import { KIND_FIELD_SELECTORS } from './podResources';
import { advanceRollout, applyRolloutStatusWrite } from './rollouts';
import {
  cloneRolloutState,
  newRolloutState,
  RolloutState,
} from './rolloutState';
import { rolloutStatusOf } from './rolloutStatus';

/** What kind of write a history entry records. */
export type WriteVerb = 'create' | 'update' | 'patch' | 'delete' | 'status';

/** One API write, as `history()` shows it. */
export interface HistoryEntry {
  /** When the write happened (ISO 8601, milliseconds). */
  at: string;
  verb: WriteVerb;
  kind: string;
  namespace?: string;
  name: string;
  /** The resourceVersion the write produced. */
  resourceVersion: string;
  /** The stored object right after the write (for a delete: the last state). */
  object: SimObject;
}

export interface HistoryFilter {
  kind?: string;
  namespace?: string;
  name?: string;
  verb?: WriteVerb;
}

/** The most writes a cluster's history keeps (the oldest go first). */
export const HISTORY_LIMIT = 2000;

/** An object as stored: what GET returns, with apiVersion and kind always set. */
export interface SimObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    resourceVersion: string;
    generation?: number;
    creationTimestamp: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  spec?: any;
  status?: any;
  [key: string]: unknown;
}

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continueToken?: string;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** 'status' for the /status subresource: only status changes are kept. */
  subresource?: 'status';
}

export interface WriteResult {
  object: SimObject;
  created: boolean;
}

export interface SimList {
  kind: string;
  apiVersion: string;
  metadata: {
    resourceVersion: string;
    continue?: string;
    remainingItemCount?: number;
  };
  items: any[];
}

function out(obj: JsonObject): SimObject {
  return clone(obj) as unknown as SimObject;
}

interface Entry {
  def: ResourceDef;
  obj: JsonObject;
  clock?: RolloutClock;
  /** The simulated Argo Rollouts controller's state (Rollouts only). */
  ro?: RolloutState;
}

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function keyOf(
  def: ResourceDef,
  namespace: string | undefined,
  name: string,
): string {
  return `${def.group}/${def.plural}/${namespace ?? ''}/${name}`;
}

function metaOf(obj: JsonObject): JsonObject {
  if (!isPlainObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as JsonObject;
}

/** The part of an object whose changes bump metadata.generation. */
function generationRelevant(obj: JsonObject): JsonObject {
  const rest = { ...obj };
  delete rest.metadata;
  delete rest.status;
  delete rest.apiVersion;
  delete rest.kind;
  return rest;
}

function isWorkload(def: ResourceDef): boolean {
  return def.kind === 'Deployment' || def.kind === 'Rollout';
}

function availableOf(obj: JsonObject): number {
  const status = asObject(obj.status);
  return typeof status?.availableReplicas === 'number'
    ? status.availableReplicas
    : 0;
}

export class ClusterStore {
  private revision = 1;
  private readonly entries = new Map<string, Entry>();
  private readonly ips: Allocator<string> = clusterIpAllocator();
  private readonly nodePorts: Allocator<number> = nodePortAllocator();
  readonly readiness: Readiness;
  /** CustomResourceDefinitions installed (Argo Rollouts by default). */
  readonly crds = new Set<string>([
    'rollouts.argoproj.io',
    'analysistemplates.argoproj.io',
  ]);
  private readonly writes: HistoryEntry[] = [];
  /** Every change with its resourceVersion, the bounded window watches are served from. */
  readonly changes = new ChangeLog();

  constructor(
    readyDelayMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.readiness = { readyDelayMs, neverReady: false };
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
   * `analysistemplates.argoproj.io`: switching the first switches both.
   */
  setCrdInstalled(crd: string, installed: boolean): void {
    const names =
      crd === 'rollouts.argoproj.io'
        ? [crd, 'analysistemplates.argoproj.io']
        : [crd];
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

  /** API writes (not the controllers' status updates), oldest first. */
  history(filter: HistoryFilter = {}): HistoryEntry[] {
    return this.writes
      .filter(
        w =>
          (filter.kind === undefined || w.kind === filter.kind) &&
          (filter.namespace === undefined ||
            w.namespace === filter.namespace) &&
          (filter.name === undefined || w.name === filter.name) &&
          (filter.verb === undefined || w.verb === filter.verb),
      )
      .map(w => clone(w));
  }

  private record(verb: WriteVerb, obj: JsonObject) {
    const meta = metaOf(obj);
    this.writes.push({
      at: new Date(this.now()).toISOString(),
      verb,
      kind: String(obj.kind),
      ...(typeof meta.namespace === 'string'
        ? { namespace: meta.namespace }
        : {}),
      name: String(meta.name),
      resourceVersion: String(meta.resourceVersion),
      object: out(obj),
    });
    if (this.writes.length > HISTORY_LIMIT)
      this.writes.splice(0, this.writes.length - HISTORY_LIMIT);
  }

  /** Changes readiness after bringing every status up to date with the old setting. */
  setReadiness(opts: Partial<Readiness>): void {
    this.tick();
    if (opts.readyDelayMs !== undefined)
      this.readiness.readyDelayMs = opts.readyDelayMs;
    if (opts.neverReady !== undefined)
      this.readiness.neverReady = opts.neverReady;
  }

  /** The store's clock (what the controllers and pod logs use as now). */
  currentTime(): number {
    return this.now();
  }

  resourceVersion(): string {
    return String(this.revision);
  }

  private bump(): string {
    this.revision += 1;
    return String(this.revision);
  }

  // ------------------------------------------------------------------ reads

  get(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
  ): SimObject {
    this.tick();
    return out(this.mustGet(def, namespace, name).obj);
  }

  list(
    def: ResourceDef,
    namespace: string | undefined,
    query: ListQuery,
  ): SimList {
    this.tick();
    const labelReqs = query.labelSelector
      ? parseLabelSelector(query.labelSelector)
      : [];
    const fieldReqs = query.fieldSelector
      ? parseFieldSelector(query.fieldSelector, KIND_FIELD_SELECTORS[def.kind])
      : [];
    let start = '';
    if (query.continueToken) {
      try {
        const token = JSON.parse(
          Buffer.from(query.continueToken, 'base64url').toString('utf8'),
        );
        if (typeof token.start !== 'string') throw new Error('no start key');
        start = token.start;
      } catch {
        throw errors.badRequest(
          'continue key is not valid: invalid continue token',
        );
      }
    }
    const prefix = `${def.group}/${def.plural}/${
      namespace === undefined ? '' : `${namespace}/`
    }`;
    const keys = [...this.entries.keys()]
      .filter(k => k.startsWith(prefix) && k > start)
      .sort();
    const selected: Array<[string, JsonObject]> = [];
    for (const key of keys) {
      const obj = this.entries.get(key)!.obj;
      const labels = asObject(metaOf(obj).labels) as
        | Record<string, string>
        | undefined;
      if (matches(labelReqs, labels) && matchesFields(fieldReqs, obj))
        selected.push([key, obj]);
    }
    const limit = query.limit && query.limit > 0 ? query.limit : undefined;
    const page = limit ? selected.slice(0, limit) : selected;
    const metadata: SimList['metadata'] = {
      resourceVersion: this.resourceVersion(),
    };
    if (limit && selected.length > limit) {
      const lastKey = page[page.length - 1][0];
      metadata.continue = Buffer.from(
        JSON.stringify({
          v: 'meta.k8s.io/v1',
          rv: this.revision,
          start: lastKey,
        }),
      ).toString('base64url');
      if (!query.labelSelector && !query.fieldSelector) {
        metadata.remainingItemCount = selected.length - limit;
      }
    }
    const items = page.map(([, obj]) => {
      const item = clone(obj);
      if (def.builtin) {
        // The API server encodes list items of built-in types without kind/apiVersion.
        delete item.kind;
        delete item.apiVersion;
      }
      return item;
    });
    return {
      kind: `${def.kind}List`,
      apiVersion: apiVersionOf(def),
      metadata,
      items,
    };
  }

  /** Every stored object, in a stable order, with computed status up to date. */
  objects(): SimObject[] {
    this.tick();
    return [...this.entries.keys()]
      .sort()
      .map(k => out(this.entries.get(k)!.obj));
  }

  private find(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
  ): Entry | undefined {
    return this.entries.get(
      keyOf(def, def.namespaced ? namespace : undefined, name),
    );
  }

  private mustGet(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
  ): Entry {
    const entry = this.find(def, namespace, name);
    if (!entry) throw errors.notFound(def.plural, def.group, name);
    return entry;
  }

  private namespaceExists(namespace: string): boolean {
    return this.entries.has(
      keyOf(resourceForKind('Namespace')!, undefined, namespace),
    );
  }

  // ----------------------------------------------------------------- writes

  private checkBody(
    def: ResourceDef,
    namespace: string | undefined,
    body: unknown,
  ): JsonObject {
    if (!isPlainObject(body))
      throw errors.badRequest('the request body must be a JSON object');
    const apiVersion = body.apiVersion;
    if (apiVersion !== undefined && apiVersion !== apiVersionOf(def)) {
      throw errors.badRequest(
        `the API version in the data (${String(
          apiVersion,
        )}) does not match the expected API version (${apiVersionOf(def)})`,
      );
    }
    if (body.kind !== undefined && body.kind !== def.kind) {
      throw errors.badRequest(
        `${def.kind} in version "${
          def.version
        }" cannot be handled as a ${String(
          body.kind,
        )}: the object kind does not match the endpoint`,
      );
    }
    const meta = asObject(body.metadata) ?? {};
    if (
      def.namespaced &&
      meta.namespace !== undefined &&
      meta.namespace !== '' &&
      meta.namespace !== namespace
    ) {
      throw errors.badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const obj = clone(body);
    // Quantities are read when the body is decoded: a bad one fails the
    // decoding, before defaulting and validation.
    const problem =
      canonicalizeQuantities(def, obj) ?? secretDecodeProblem(def, obj);
    if (problem) {
      throw errors.badRequest(
        `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${problem}`,
      );
    }
    return obj;
  }

  private invalid(
    def: ResourceDef,
    name: string,
    causes: StatusCause[],
  ): ApiError {
    return errors.invalid(def.kind, def.group, name, causes);
  }

  create(
    def: ResourceDef,
    namespace: string | undefined,
    body: unknown,
    opts: WriteOptions,
  ): SimObject {
    this.tick();
    const obj = this.checkBody(def, namespace, body);
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
    const causes = [
      ...validateName(def, meta.name),
      ...validateObject(def, obj, undefined),
    ];
    if (causes.length) throw this.invalid(def, name, causes);
    if (this.find(def, namespace, name))
      throw errors.alreadyExists(def.plural, def.group, name);
    const commitAllocations = this.allocateService(def, obj, undefined, name);
    this.initialStatus(def, obj);
    const entry: Entry = { def, obj };
    if (isWorkload(def)) {
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

  private initialStatus(def: ResourceDef, obj: JsonObject) {
    if (initialStatusOf(def, obj)) return;
    switch (def.kind) {
      case 'Namespace':
        obj.status = { phase: 'Active' };
        break;
      case 'Service':
        obj.status = { loadBalancer: {} };
        break;
      case 'PodDisruptionBudget':
        obj.status = {
          disruptionsAllowed: 0,
          currentHealthy: 0,
          desiredHealthy: 0,
          expectedPods: 0,
        };
        break;
      case 'HorizontalPodAutoscaler':
        obj.status = { desiredReplicas: 0 };
        break;
      default:
        obj.status = {};
    }
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
        const candidate = this.checkBody(def, namespace, body);
        const meta = metaOf(candidate);
        if (meta.name !== undefined && meta.name !== name)
          throw this.nameMismatch(meta.name, name);
        meta.name = name;
        delete meta.resourceVersion;
        return {
          object: this.create(def, namespace, candidate, opts),
          created: true,
        };
      }
      throw errors.notFound(def.plural, def.group, name);
    }
    const candidate = this.checkBody(def, namespace, body);
    const meta = metaOf(candidate);
    if (meta.name !== undefined && meta.name !== '' && meta.name !== name) {
      throw this.nameMismatch(meta.name, name);
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
      throw this.invalid(def, name, [
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

  private nameMismatch(given: unknown, url: string): ApiError {
    return errors.badRequest(
      `the name of the object (${String(
        given,
      )}) does not match the name on the URL (${url})`,
    );
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
      canonicalizeQuantities(def, patched) ?? secretDecodeProblem(def, patched);
    if (problem) {
      // What the API server answers when the patched object does not decode:
      // Invalid, with no kind or name, showing the whole patched object (as
      // JSON here; a strategic merge patch shows a Go map there).
      throw errors.invalid('', '', '', [
        cause.invalid('patch', JSON.stringify(patched), problem),
      ]);
    }
    const meta = metaOf(patched);
    if (meta.name !== name) throw this.nameMismatch(meta.name, name);
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
  private commitUpdate(
    entry: Entry,
    candidate: JsonObject,
    opts: WriteOptions,
    verb?: WriteVerb,
  ): SimObject {
    const { def } = entry;
    const old = entry.obj;
    const oldMeta = metaOf(old);
    let next: JsonObject;
    if (opts.subresource === 'status') {
      next = clone(old);
      next.status = clone(candidate.status);
    } else {
      next = candidate;
      next.status = clone(old.status);
    }
    if (next.status === undefined) delete next.status; // kinds without status (Secret)
    next.apiVersion = apiVersionOf(def);
    next.kind = def.kind;
    const meta = metaOf(next);
    for (const field of [
      'name',
      'namespace',
      'uid',
      'creationTimestamp',
      'generation',
      'resourceVersion',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'managedFields',
    ]) {
      if (oldMeta[field] === undefined) delete meta[field];
      else meta[field] = clone(oldMeta[field]);
    }
    delete meta.selfLink;
    const name = String(oldMeta.name);
    let commitAllocations = () => {};
    if (opts.subresource !== 'status') {
      applyDefaults(def, next);
      this.retainServiceFields(def, next, old);
      const causes = validateObject(def, next, old);
      if (causes.length) throw this.invalid(def, name, causes);
      commitAllocations = this.allocateService(def, next, old, name);
    }
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
    const pre = asObject(asObject(options)?.preconditions);
    if (pre?.uid !== undefined && pre.uid !== meta.uid) {
      throw errors.conflict(
        def.plural,
        def.group,
        name,
        `Precondition failed: UID in precondition: ${String(
          pre.uid,
        )}, UID in object meta: ${String(meta.uid)}`,
      );
    }
    if (
      pre?.resourceVersion !== undefined &&
      pre.resourceVersion !== meta.resourceVersion
    ) {
      throw errors.conflict(
        def.plural,
        def.group,
        name,
        `Precondition failed: ResourceVersion in precondition: ${String(
          pre.resourceVersion,
        )}, ResourceVersion in meta: ${String(meta.resourceVersion)}`,
      );
    }
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

  /**
   * Deletes an object that goes away without an API DELETE of its own (a namespace's contents,
   * a CRD's objects, what a controller deletes): a new resourceVersion and a DELETED event.
   */
  private dropEntry(entry: Entry) {
    const last = clone(entry.obj);
    metaOf(last).resourceVersion = this.bump();
    this.removeEntry(entry);
    this.emit('DELETED', entry.def, last, entry.obj);
  }

  /**
   * Records a change for watches, serialized at once (later in-place changes don't leak). The
   * previous state is kept only when a selector could see it differently (its labels or a
   * selectable field changed): about one serialized copy per change in the window.
   */
  private emit(
    type: ChangeType,
    def: ResourceDef,
    obj: JsonObject,
    before?: JsonObject,
  ) {
    const extra = KIND_FIELD_SELECTORS[def.kind] ?? [];
    const selection = selectionOf(obj, extra);
    const prevSelection = before && selectionOf(before, extra);
    const changed =
      prevSelection !== undefined && !deepEqual(prevSelection, selection);
    this.changes.append({
      rv: Number(metaOf(obj).resourceVersion),
      type,
      resource: `${def.group}/${def.plural}`,
      object: { json: JSON.stringify(obj), selection },
      ...(changed
        ? { prev: { json: JSON.stringify(before), selection: prevSelection } }
        : {}),
    });
  }

  /** Forgets the change history: a watch from any resourceVersion before now gets 410 Expired. */
  compactChanges(): void {
    this.changes.compact(this.revision);
  }

  private removeEntry(entry: Entry) {
    const meta = metaOf(entry.obj);
    this.entries.delete(
      keyOf(entry.def, meta.namespace as string | undefined, String(meta.name)),
    );
    if (entry.def.kind === 'Service') {
      const spec = asObject(entry.obj.spec) ?? {};
      for (const ip of asArray(spec.clusterIPs)) this.ips.release(String(ip));
      for (const p of asArray(spec.ports)) {
        const port = asObject(p)?.nodePort;
        if (typeof port === 'number') this.nodePorts.release(port);
      }
    }
  }

  // --------------------------------------------------------------- Services

  /** On update, a Service keeps the clusterIP(s) and nodePorts a client omitted. */
  private retainServiceFields(
    def: ResourceDef,
    next: JsonObject,
    old: JsonObject,
  ) {
    if (def.kind !== 'Service') return;
    const spec = asObject(next.spec) ?? {};
    const oldSpec = asObject(old.spec) ?? {};
    if (
      (spec.clusterIP === undefined || spec.clusterIP === '') &&
      oldSpec.clusterIP
    ) {
      spec.clusterIP = oldSpec.clusterIP;
    }
    if (
      asArray(spec.clusterIPs).length === 0 &&
      oldSpec.clusterIPs &&
      spec.clusterIP === oldSpec.clusterIP
    ) {
      spec.clusterIPs = clone(oldSpec.clusterIPs);
    }
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
      for (const raw of asArray(spec.ports)) {
        const p = asObject(raw);
        if (!p || p.nodePort !== undefined) continue;
        const match = asArray(oldSpec.ports)
          .map(asObject)
          .find(
            o =>
              o &&
              o.port === p.port &&
              (o.protocol ?? 'TCP') === (p.protocol ?? 'TCP'),
          );
        if (match && typeof match.nodePort === 'number')
          p.nodePort = match.nodePort;
      }
    }
  }

  /**
   * Assigns clusterIP(s) and nodePorts (422 when a requested one is taken or
   * out of range). Returns the function that commits the reservations.
   */
  private allocateService(
    def: ResourceDef,
    obj: JsonObject,
    old: JsonObject | undefined,
    name: string,
  ): () => void {
    if (def.kind !== 'Service') return () => {};
    const spec = asObject(obj.spec) ?? {};
    const oldSpec = asObject(old?.spec) ?? {};
    const causes: StatusCause[] = [];
    const newIps: string[] = [];
    if (spec.type === 'ExternalName') {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    } else if (spec.clusterIP === 'None') {
      spec.clusterIPs = ['None'];
    } else if (spec.clusterIP === undefined || spec.clusterIP === '') {
      const ip = this.ips.next();
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
      newIps.push(ip);
    } else if (spec.clusterIP !== oldSpec.clusterIP) {
      const ip = String(spec.clusterIP);
      if (!this.ips.contains(ip)) {
        causes.push(
          cause.invalid(
            'spec.clusterIPs',
            [ip],
            `failed to allocate IP ${ip}: provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/16`,
          ),
        );
      } else if (this.ips.isAllocated(ip)) {
        causes.push(
          cause.invalid(
            'spec.clusterIPs',
            [ip],
            `failed to allocate IP ${ip}: provided IP is already allocated`,
          ),
        );
      }
      spec.clusterIPs = [ip];
      newIps.push(ip);
    } else if (asArray(spec.clusterIPs).length === 0) {
      spec.clusterIPs = [spec.clusterIP];
    }
    const oldPorts = new Set(
      asArray(oldSpec.ports)
        .map(p => asObject(p)?.nodePort)
        .filter((p): p is number => typeof p === 'number'),
    );
    const newPorts: number[] = [];
    const keptPorts = new Set<number>();
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
      asArray(spec.ports).forEach((raw, i) => {
        const p = asObject(raw);
        if (!p) return;
        if (p.nodePort === undefined) {
          p.nodePort = this.nodePorts.next();
          newPorts.push(p.nodePort as number);
        } else if (typeof p.nodePort === 'number' && oldPorts.has(p.nodePort)) {
          keptPorts.add(p.nodePort);
        } else {
          const port = Number(p.nodePort);
          if (!this.nodePorts.contains(port)) {
            causes.push(
              cause.invalid(
                `spec.ports[${i}].nodePort`,
                port,
                'provided port is not in the valid range. The range of valid ports is 30000-32767',
              ),
            );
          } else if (
            this.nodePorts.isAllocated(port) ||
            newPorts.includes(port)
          ) {
            causes.push(
              cause.invalid(
                `spec.ports[${i}].nodePort`,
                port,
                'provided port is already allocated',
              ),
            );
          }
          newPorts.push(port);
        }
      });
    }
    if (causes.length) throw this.invalid(def, name, causes);
    return () => {
      for (const ip of newIps) this.ips.reserve(ip);
      for (const ip of asArray(oldSpec.clusterIPs)) {
        if (!asArray(spec.clusterIPs).includes(ip))
          this.ips.release(String(ip));
      }
      for (const port of newPorts) this.nodePorts.reserve(port);
      for (const port of oldPorts)
        if (!keptPorts.has(port)) this.nodePorts.release(port);
    };
  }

  // ------------------------------------------------------------ controllers

  private refreshWorkloadStatus(entry: Entry, now: number): boolean {
    if (!entry.clock) return false;
    let status: JsonObject;
    if (entry.ro) {
      advanceRollout(entry.ro, entry.obj, this.readiness, now);
      status = rolloutStatusOf(
        entry.ro,
        entry.obj,
        entry.clock.generation,
        this.readiness,
        now,
      );
    } else {
      status = deploymentStatus(entry.obj, entry.clock, this.readiness, now);
    }
    if (deepEqual(status, entry.obj.status)) return false;
    entry.obj.status = status;
    return true;
  }

  /**
   * Runs what the controllers would have done by now: the HPA clamps its
   * target's replicas to [minReplicas, maxReplicas], and Deployment/Rollout
   * status follows the simulated pods. Each change is a write (new
   * resourceVersion), as it would be on a real cluster.
   */
  tick(): void {
    const now = this.now();
    for (const entry of [...this.entries.values()]) {
      if (entry.def.kind === 'HorizontalPodAutoscaler') this.runHpa(entry, now);
    }
    for (const entry of this.entries.values()) {
      if (entry.clock && this.refreshWorkloadStatus(entry, now)) {
        metaOf(entry.obj).resourceVersion = this.bump();
        this.emit('MODIFIED', entry.def, entry.obj);
      }
    }
    reconcilePods(this.podControllerHost(), now);
    for (const entry of this.entries.values()) {
      if (entry.def.kind !== 'PodDisruptionBudget') continue;
      const status = pdbStatus(entry.obj, this.selectedPods(entry.obj), now);
      if (!deepEqual(status, entry.obj.status)) {
        entry.obj.status = status;
        metaOf(entry.obj).resourceVersion = this.bump();
        this.emit('MODIFIED', entry.def, entry.obj);
      }
    }
  }

  private podHost?: PodControllerHost;

  /** What the ReplicaSet and pod controllers see of, and write to, this store. */
  private podControllerHost(): PodControllerHost {
    if (this.podHost) return this.podHost;
    const ofKind = (kind: string) =>
      [...this.entries.values()].filter(e => e.def.kind === kind);
    this.podHost = {
      readiness: this.readiness,
      deployments: () =>
        ofKind('Deployment')
          .filter(e => e.clock && !e.ro)
          .map(e => ({ obj: e.obj, clock: e.clock! })),
      all: kind => ofKind(kind).map(e => e.obj),
      save: (kind, obj) => this.controllerWrite(kind, obj),
      remove: (kind, namespace, name) => {
        const entry = this.find(resourceForKind(kind)!, namespace, name);
        if (entry) this.dropEntry(entry);
      },
    };
    return this.podHost;
  }

  /**
   * A controller's write (not an API request, so not in `history()`): creates the object with
   * uid, creationTimestamp and generation, or replaces it when it changed, with a new
   * resourceVersion either way (generation bumped on a spec change).
   */
  private controllerWrite(kind: string, obj: JsonObject): JsonObject {
    const def = resourceForKind(kind)!;
    const meta = metaOf(obj);
    const namespace = def.namespaced ? String(meta.namespace) : undefined;
    const name = String(meta.name);
    obj.apiVersion = apiVersionOf(def);
    obj.kind = def.kind;
    const entry = this.find(def, namespace, name);
    if (entry) {
      if (deepEqual(entry.obj, obj)) return entry.obj;
      if (
        def.hasGeneration &&
        !deepEqual(generationRelevant(entry.obj), generationRelevant(obj))
      ) {
        meta.generation = Number(metaOf(entry.obj).generation ?? 0) + 1;
      }
      meta.resourceVersion = this.bump();
      const before = entry.obj;
      entry.obj = obj;
      this.emit('MODIFIED', def, obj, before);
      return obj;
    }
    if (namespace !== undefined && !this.namespaceExists(namespace)) return obj;
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.now());
    if (def.hasGeneration) meta.generation = 1;
    meta.resourceVersion = this.bump();
    this.entries.set(keyOf(def, namespace, name), { def, obj });
    this.emit('ADDED', def, obj);
    return obj;
  }

  /** The (simulated) pods of the workloads in the PDB's namespace that its selector matches. */
  private selectedPods(pdb: JsonObject): SelectedPods {
    const selector = asObject(pdb.spec)?.selector;
    const pods: SelectedPods = { expected: 0, healthy: 0 };
    if (!isPlainObject(selector)) return pods; // a null selector selects no pods
    const reqs = requirementsOf(selector);
    const namespace = metaOf(pdb).namespace;
    for (const entry of this.entries.values()) {
      if (!entry.clock || metaOf(entry.obj).namespace !== namespace) continue;
      const spec = asObject(entry.obj.spec) ?? {};
      const labels = asObject(
        asObject(asObject(spec.template)?.metadata)?.labels,
      ) as Record<string, string> | undefined;
      if (!matches(reqs, labels)) continue;
      const status = asObject(entry.obj.status) ?? {};
      pods.expected +=
        typeof status.replicas === 'number' ? status.replicas : 0;
      pods.healthy += availableOf(entry.obj);
    }
    return pods;
  }

  private runHpa(hpa: Entry, now: number) {
    const meta = metaOf(hpa.obj);
    const ref = asObject(asObject(hpa.obj.spec)?.scaleTargetRef) ?? {};
    const targetDef = RESOURCES.find(
      r =>
        r.kind === ref.kind &&
        (ref.apiVersion === undefined || apiVersionOf(r) === ref.apiVersion),
    );
    const target =
      targetDef && isWorkload(targetDef)
        ? this.find(targetDef, meta.namespace as string, String(ref.name))
        : undefined;
    const status: JsonObject = { ...(asObject(hpa.obj.status) ?? {}) };
    status.observedGeneration = meta.generation;
    if (target) {
      const spec = asObject(target.obj.spec) ?? {};
      const current = typeof spec.replicas === 'number' ? spec.replicas : 1;
      const desired = hpaDesiredReplicas(hpa.obj, current);
      if (desired !== current) {
        const next = clone(target.obj);
        (next.spec as JsonObject).replicas = desired;
        this.commitUpdate(target, next, {});
        status.lastScaleTime = rfc3339(now);
      }
      status.currentReplicas = current;
      status.desiredReplicas = desired;
    }
    if (!deepEqual(status, hpa.obj.status)) {
      hpa.obj.status = status;
      meta.resourceVersion = this.bump();
      this.emit('MODIFIED', hpa.def, hpa.obj);
    }
  }
}
