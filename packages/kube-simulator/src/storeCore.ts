/**
 * The state of one simulated cluster's store (store.ts adds the API writes): the objects by key,
 * the resourceVersion counter, the change log watches are served from, the history of API
 * writes, the reads, and the lazily computed work of the controllers (`tick()`: HPA scaling and
 * status, Deployment/Rollout/StatefulSet/DaemonSet status, the ReplicaSet and pod controllers,
 * Job, claim and load balancer status (timedStatus.ts), PDB status).
 */
import { randomUUID } from 'node:crypto';
import { ChangeLog, ChangeType, selectionOf } from './changeLog';
import { errors } from './errors';
import { HpaObservation, hpaDesired, hpaStatus } from './hpaStatus';
import { reconcileJobPods } from './jobPods';
import { ingressControllerAddress } from './loadBalancers';
import { PodControllerHost, reconcilePods } from './podController';
import { podsSelectedBy } from './pdbSelection';
import { daemonSetStatus, statefulSetStatus } from './podWorkloadStatus';
import { KIND_FIELD_SELECTORS } from './podResources';
import { apiVersionOf, ResourceDef } from './resourceDef';
import { RESOURCES, resourceForKind, SERVER_VERSION } from './resources';
import { ServerVersion, serverVersionOf } from './serverVersion';
import { advanceRollout } from './rollouts';
import { routedVirtualService, routeRolloutTraffic } from './rolloutTraffic';
import { rolloutStatusOf } from './rolloutStatus';
import { ServiceAddresses } from './serviceAddresses';
import { reconcileSetPods } from './setPods';
import { listPage } from './storeList';
import {
  Entry,
  generationRelevant,
  HISTORY_LIMIT,
  HistoryEntry,
  HistoryFilter,
  isWorkload,
  keyOf,
  ListQuery,
  metaOf,
  out,
  SimList,
  SimObject,
  WriteOptions,
  WriteVerb,
} from './storeTypes';
import { timedStatusOf } from './timedStatus';
import { asObject, clone, deepEqual, JsonObject, rfc3339 } from './util';
import { deploymentStatus, pdbStatus, Readiness } from './workloads';

export abstract class StoreCore {
  protected revision = 1;
  protected readonly entries = new Map<string, Entry>();
  protected readonly services = new ServiceAddresses();
  /** The address this cluster's ingress controller publishes on every Ingress. */
  private readonly ingressAddress = ingressControllerAddress();
  readonly readiness: Readiness;
  /** CustomResourceDefinitions installed (Argo Rollouts by default). */
  readonly crds = new Set<string>([
    'rollouts.argoproj.io',
    'analysistemplates.argoproj.io',
  ]);
  /** What `GET /version` answers; `setServerVersion` changes it. */
  serverVersion: ServerVersion = serverVersionOf(SERVER_VERSION.gitVersion);
  private readonly writes: HistoryEntry[] = [];

  /** Serves another Kubernetes version (`v1.29.4`). */
  setServerVersion(gitVersion: string): void {
    this.serverVersion = serverVersionOf(gitVersion);
  }

  /** A write's validation options, with the version this cluster serves. */
  protected validation(opts: WriteOptions): WriteOptions {
    return { ...opts, serverVersion: this.serverVersion };
  }
  /** Every change with its resourceVersion, the bounded window watches are served from. */
  readonly changes = new ChangeLog();

  constructor(
    readyDelayMs: number,
    protected readonly now: () => number = Date.now,
  ) {
    this.readiness = { readyDelayMs, neverReady: false };
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

  protected record(verb: WriteVerb, obj: JsonObject) {
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

  protected bump(): string {
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
    return listPage(this.entries, this.revision, def, namespace, query);
  }

  /** Every stored object, in a stable order, with computed status up to date. */
  objects(): SimObject[] {
    this.tick();
    return [...this.entries.keys()]
      .sort()
      .map(k => out(this.entries.get(k)!.obj));
  }

  protected find(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
  ): Entry | undefined {
    return this.entries.get(
      keyOf(def, def.namespaced ? namespace : undefined, name),
    );
  }

  protected mustGet(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
  ): Entry {
    const entry = this.find(def, namespace, name);
    if (!entry) throw errors.notFound(def.plural, def.group, name);
    return entry;
  }

  /** Stores a server-side apply's merge onto the existing object. */
  applyUpdate(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    object: JsonObject,
    opts: WriteOptions,
  ): SimObject {
    this.tick();
    return this.commitUpdate(
      this.mustGet(def, namespace, name),
      object,
      opts,
      'patch',
    );
  }

  protected namespaceExists(namespace: string): boolean {
    return this.entries.has(
      keyOf(resourceForKind('Namespace')!, undefined, namespace),
    );
  }

  /**
   * Deletes an object that goes away without an API DELETE of its own (a namespace's contents,
   * a CRD's objects, what a controller deletes): a new resourceVersion and a DELETED event.
   */
  protected dropEntry(entry: Entry) {
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
  protected emit(
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

  protected removeEntry(entry: Entry) {
    const meta = metaOf(entry.obj);
    this.entries.delete(
      keyOf(entry.def, meta.namespace as string | undefined, String(meta.name)),
    );
    if (entry.def.kind === 'Service') this.services.release(entry.obj);
  }

  // ------------------------------------------------------------ controllers

  protected refreshWorkloadStatus(entry: Entry, now: number): boolean {
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
    } else if (entry.def.kind === 'StatefulSet') {
      status = statefulSetStatus(entry.obj, entry.clock, this.readiness, now);
    } else if (entry.def.kind === 'DaemonSet') {
      status = daemonSetStatus(entry.obj, entry.clock, this.readiness, now);
    } else {
      status = deploymentStatus(entry.obj, entry.clock, this.readiness, now);
    }
    if (deepEqual(status, entry.obj.status)) return false;
    entry.obj.status = status;
    return true;
  }

  /**
   * Runs what the controllers would have done by now: the HPA clamps its
   * target's replicas to [minReplicas, maxReplicas] and writes its status,
   * Deployment/Rollout status follows the simulated pods, and load balancers
   * publish their addresses. Each change is a write (new
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
    for (const entry of this.entries.values()) if (entry.ro) this.route(entry);
    reconcilePods(this.podControllerHost(), now);
    reconcileSetPods(this.podControllerHost(), now);
    for (const entry of this.entries.values())
      this.refreshTimedStatus(entry, now);
    reconcileJobPods(this.podControllerHost(), now);
    for (const entry of this.entries.values()) {
      if (entry.def.kind !== 'PodDisruptionBudget') continue;
      const status = pdbStatus(
        entry.obj,
        podsSelectedBy(entry.obj, this.entries.values()),
        now,
      );
      if (!deepEqual(status, entry.obj.status)) {
        entry.obj.status = status;
        metaOf(entry.obj).resourceVersion = this.bump();
        this.emit('MODIFIED', entry.def, entry.obj);
      }
    }
  }

  /** Job, claim, load balancer and Ingress status, written when time since creation changes it. */
  private refreshTimedStatus(entry: Entry, now: number) {
    const status = timedStatusOf(entry, now, {
      readiness: this.readiness,
      serverVersion: this.serverVersion,
      ingressAddress: this.ingressAddress,
    });
    if (status === undefined || deepEqual(status, entry.obj.status)) return;
    entry.obj.status = status;
    metaOf(entry.obj).resourceVersion = this.bump();
    this.emit('MODIFIED', entry.def, entry.obj);
  }

  /** Argo Rollouts' Istio routing: the Rollout's VirtualService at its step's weight. */
  private route(rollout: Entry) {
    const ref = routedVirtualService(rollout.obj);
    const def = resourceForKind('VirtualService')!;
    const vs = ref && this.find(def, ref.split('/')[0], ref.split('/')[1]);
    if (!vs || !routeRolloutTraffic(rollout.obj, rollout.ro!, vs.obj)) return;
    const meta = metaOf(vs.obj);
    meta.generation = Number(meta.generation ?? 0) + 1;
    meta.resourceVersion = this.bump();
    this.emit('MODIFIED', vs.def, vs.obj);
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
      podSets: kind =>
        ofKind(kind)
          .filter(e => e.clock)
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

  /**
   * The HPA controller's pass over one HPA: reads its target's replicas, clamps them (a write
   * to the target when they change) and writes the HPA's status (hpaStatus.ts).
   */
  private runHpa(hpa: Entry, now: number) {
    const meta = metaOf(hpa.obj);
    const ref = asObject(asObject(hpa.obj.spec)?.scaleTargetRef) ?? {};
    const kind = String(ref.kind);
    const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
    const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
    const targetDef = RESOURCES.find(
      r => r.kind === kind && (!apiVersion || apiVersionOf(r) === apiVersion),
    );
    const target =
      targetDef && isWorkload(targetDef)
        ? this.find(targetDef, meta.namespace as string, String(ref.name))
        : undefined;
    let observation: HpaObservation;
    if (!target) {
      hpa.hpaScaled = undefined;
      let error = `no matches for kind "${kind}" in group "${group}"`;
      if (targetDef && !isWorkload(targetDef))
        error = 'the server could not find the requested resource';
      else if (targetDef) {
        const resource = targetDef.group
          ? `${targetDef.plural}.${targetDef.group}`
          : targetDef.plural;
        error = `${resource} "${String(ref.name)}" not found`;
      }
      observation = { kind: 'missing', error };
    } else {
      const spec = asObject(target.obj.spec) ?? {};
      const current = typeof spec.replicas === 'number' ? spec.replicas : 1;
      // The simulated metrics ask for what the target's owner set, which a clamp overwrote.
      const scaled = hpa.hpaScaled;
      const recommended =
        scaled && scaled.to === current ? scaled.from : current;
      const { desired } = hpaDesired(hpa.obj, current, recommended);
      const rescaled = desired !== current;
      if (rescaled) {
        const next = clone(target.obj);
        (next.spec as JsonObject).replicas = desired;
        this.commitUpdate(target, next, {});
        hpa.hpaScaled = { from: recommended, to: desired };
      } else if (!scaled || scaled.to !== current) {
        hpa.hpaScaled = undefined;
      }
      observation = { kind: 'found', current, recommended, rescaled };
    }
    const status = hpaStatus(hpa.obj, observation, now);
    if (!deepEqual(status, hpa.obj.status)) {
      hpa.obj.status = status;
      meta.resourceVersion = this.bump();
      this.emit('MODIFIED', hpa.def, hpa.obj);
    }
  }

  /** The common end of PUT, PATCH and apply (and of the HPA's scaling). */
  protected abstract commitUpdate(
    entry: Entry,
    candidate: JsonObject,
    opts: WriteOptions,
    verb?: WriteVerb,
  ): SimObject;
}
