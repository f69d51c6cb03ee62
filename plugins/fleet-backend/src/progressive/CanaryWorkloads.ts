import {
  ApisApi,
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type ConfigurationOptions,
  type V1Deployment,
  type V1Service,
} from '@kubernetes/client-node';
import type { AnalysisTemplate, CanaryMode } from '@cnp/plugin-fleet-common';
import type {
  ClusterAccess,
  ClusterClients,
} from '../kubernetes/ClusterClients';
import { describeKubeError, isKubeStatus } from '../kubernetes/requestOptions';
import {
  ENTITY_REF_ANNOTATION,
  MANAGED_BY_LABEL,
  NAME_LABEL,
  serviceNameFor,
  type Manifests,
} from '../deploy/manifests';
import {
  assertFleetOwned,
  deleteIfFleetOwned,
  isFleetOwned,
  isSteerableBy,
  OwnershipConflictError,
  ownershipConflict,
} from '../deploy/ownership';
import { fillQuery, type AnalysisContext } from './analysis';

/** The label that tells a canary's pods from the stable ones. */
export const TRACK_LABEL = 'cnp.io/track';
/** The label that keeps a Rollout's pods apart from the Deployment's. */
export const WORKLOAD_LABEL = 'cnp.io/workload';
/** The Fleet revision a Rollout's pod template runs. */
export const REVISION_ANNOTATION = 'cnp.io/revision';

const ROLLOUTS = { group: 'argoproj.io', version: 'v1alpha1' };
const ISTIO_GROUP = 'networking.istio.io';

/** What one cluster's canary needs to know. */
export interface CanaryTarget {
  cluster: ClusterAccess;
  namespace: string;
  /** The application's Kubernetes name (its Deployment's). */
  name: string;
  /** What the cluster runs now (the previous revision). */
  stable: Manifests;
  /** What the release brings (the new revision). */
  canary: Manifests;
  /** The revision numbers of the two, written on a Rollout's pod template. */
  stableRevision: number;
  canaryRevision: number;
  /** The replicas the application runs. */
  replicas: number;
  maxSurge: number;
  maxUnavailable: number;
  /** The strategy's weights, in order (the Rollout's steps are built from them). */
  weights: number[];
  istio?: { virtualService: string; routes?: string[] };
  analysis?: { templates: AnalysisTemplate[]; context: AnalysisContext };
}

export type StepOutcome =
  | { kind: 'reached'; message: string }
  | { kind: 'waiting'; message: string }
  | {
      kind: 'failed';
      message: string;
      /** `OWNERSHIP_CONFLICT`: a foreign object is in the way; it was left untouched. */
      reason?: 'OWNERSHIP_CONFLICT';
    };

interface Session {
  apps: AppsV1Api;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  apis: ApisApi;
  autoscaling: AutoscalingV2Api;
  opts: () => ConfigurationOptions;
  mergePatch: () => ConfigurationOptions;
}

export const canaryName = (name: string) => `${name}-canary`;

/** The component a canary is for: its objects carry this entity ref. */
export function entityRefOf(target: CanaryTarget): string | undefined {
  return (
    target.canary.deployment.metadata?.annotations?.[ENTITY_REF_ANNOTATION] ??
    target.stable.deployment.metadata?.annotations?.[ENTITY_REF_ANNOTATION]
  );
}

/** The canary's Deployment: the new revision's, named `<name>-canary`, its pods tracked `canary`. */
export function canaryDeployment(
  target: CanaryTarget,
  replicas: number,
): V1Deployment {
  const base = structuredClone(target.canary.deployment);
  const name = canaryName(target.name);
  const track = { [TRACK_LABEL]: 'canary' };
  base.metadata = {
    ...base.metadata,
    name,
    labels: { ...base.metadata?.labels, ...track },
  };
  base.spec!.replicas = replicas;
  base.spec!.selector = {
    matchLabels: { ...base.spec!.selector.matchLabels, ...track },
  };
  base.spec!.template.metadata = {
    ...base.spec!.template.metadata,
    labels: { ...base.spec!.template.metadata?.labels, ...track },
  };
  return base;
}

function canaryService(target: CanaryTarget): V1Service {
  const base = structuredClone(target.canary.service);
  base.metadata = {
    ...base.metadata,
    name: canaryName(serviceNameFor(target.name)),
  };
  base.spec!.selector = { [NAME_LABEL]: target.name, [TRACK_LABEL]: 'canary' };
  return base;
}

/** The Rollout's steps: each weight, then an untimed pause Fleet promotes past; 100 ends it. */
export function rolloutSteps(weights: number[]): object[] {
  return weights.flatMap(weight =>
    weight >= 100
      ? [{ setWeight: 100 }]
      : [{ setWeight: weight }, { pause: {} }],
  );
}

/** The step index a Rollout pauses at once weight `index` of the strategy is reached. */
export function rolloutPauseIndex(index: number): number {
  return index * 2 + 1;
}

function analysisTemplateName(
  target: CanaryTarget,
  template: AnalysisTemplate,
) {
  return `${target.name}-${template.name}`.slice(0, 253);
}

/**
 * The Kubernetes side of a canary on one cluster, through that cluster's own client: what the
 * cluster serves, the canary Deployment and Service, the VirtualService's weights, the Argo
 * Rollout and its AnalysisTemplates. Every call is idempotent: a step re-run after a restart
 * finds what it already did and goes on.
 */
export class CanaryWorkloads {
  private constructor(
    private readonly clients: ClusterClients,
    private readonly timeoutMs: number,
  ) {}

  static create(options: {
    clients: ClusterClients;
    requestTimeoutMs?: number;
  }) {
    return new CanaryWorkloads(
      options.clients,
      options.requestTimeoutMs ?? 15_000,
    );
  }

  private async session(cluster: ClusterAccess): Promise<Session> {
    const loaded = await this.clients.kubeConfigFor(cluster);
    if (loaded.kind === 'unusable') {
      throw new Error(
        `cluster '${cluster.name}' has no usable kubeconfig: ${loaded.reason}`,
      );
    }
    const kc = loaded.kubeConfig;
    const opts = () => loaded.requestOptions(this.timeoutMs);
    return {
      apps: kc.makeApiClient(AppsV1Api),
      core: kc.makeApiClient(CoreV1Api),
      custom: kc.makeApiClient(CustomObjectsApi),
      apis: kc.makeApiClient(ApisApi),
      autoscaling: kc.makeApiClient(AutoscalingV2Api),
      opts,
      mergePatch: () =>
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch, opts()),
    };
  }

  /**
   * How the cluster runs a canary, from what it serves (`/apis`): an Argo Rollout where it serves
   * `argoproj.io`, Istio weights where asked and it serves `networking.istio.io`, else replicas.
   */
  async detectMode(
    cluster: ClusterAccess,
    wantsIstio: boolean,
  ): Promise<CanaryMode> {
    const s = await this.session(cluster);
    const groups = await s.apis.getAPIVersions(undefined, s.opts());
    const served = new Set(groups.groups.map(g => g.name));
    // A group is not enough: Argo CD and Argo Workflows serve argoproj.io without Rollouts.
    const serves = async (group: string, version: string, plural: string) => {
      if (!served.has(group)) return false;
      try {
        const list = await s.custom.getAPIResources(
          { group, version },
          s.opts(),
        );
        return list.resources.some(r => r.name === plural);
      } catch (error) {
        if (isKubeStatus(error, 404)) return false;
        throw error;
      }
    };
    if (await serves(ROLLOUTS.group, ROLLOUTS.version, 'rollouts'))
      return 'rollout';
    if (wantsIstio && (await serves(ISTIO_GROUP, 'v1beta1', 'virtualservices')))
      return 'istio';
    return 'replicas';
  }

  /** Whether an HorizontalPodAutoscaler scales the application's Deployment. */
  async autoscaled(
    cluster: ClusterAccess,
    namespace: string,
    name: string,
  ): Promise<boolean> {
    const s = await this.session(cluster);
    const hpas = await s.autoscaling.listNamespacedHorizontalPodAutoscaler(
      { namespace },
      s.opts(),
    );
    return hpas.items.some(
      h =>
        h.spec?.scaleTargetRef?.kind === 'Deployment' &&
        h.spec.scaleTargetRef.name === name,
    );
  }

  /**
   * Reads one of the canary's Deployments (the stable or the canary) for change: a Deployment of
   * that name that is not Fleet's for this component is an ownership conflict, never changed.
   */
  private async readDeployment(s: Session, target: CanaryTarget, name: string) {
    const { namespace } = target;
    let live: V1Deployment;
    try {
      live = await s.apps.readNamespacedDeployment(
        { namespace, name },
        s.opts(),
      );
    } catch (error) {
      if (isKubeStatus(error, 404)) return undefined;
      throw error;
    }
    assertFleetOwned('Deployment', namespace, name, live, entityRefOf(target));
    return live;
  }

  /** Reads a custom object for change; a foreign one is an ownership conflict. */
  private async readCustomOwned(
    s: Session,
    target: CanaryTarget,
    kind: string,
    plural: string,
    name: string,
  ): Promise<any | undefined> {
    let live: any;
    try {
      live = await s.custom.getNamespacedCustomObject(
        { ...ROLLOUTS, namespace: target.namespace, plural, name },
        s.opts(),
      );
    } catch (error) {
      if (isKubeStatus(error, 404)) return undefined;
      throw error;
    }
    assertFleetOwned(kind, target.namespace, name, live, entityRefOf(target));
    return live;
  }

  /** Reads the VirtualService Fleet steers; its owner must have annotated it for this component. */
  private async readSteerableVirtualService(
    s: Session,
    target: CanaryTarget,
  ): Promise<any | undefined> {
    const name = target.istio!.virtualService;
    let vs: any;
    try {
      vs = await s.custom.getNamespacedCustomObject(
        {
          group: ISTIO_GROUP,
          version: 'v1beta1',
          namespace: target.namespace,
          plural: 'virtualservices',
          name,
        },
        s.opts(),
      );
    } catch (error) {
      if (isKubeStatus(error, 404)) return undefined;
      throw error;
    }
    const entityRef = entityRefOf(target);
    if (!isSteerableBy(vs, entityRef)) {
      throw ownershipConflict(
        'VirtualService',
        target.namespace,
        name,
        vs,
        entityRef,
        'steered',
      );
    }
    return vs;
  }

  /**
   * Before a canary starts on a cluster: every object it would change that already exists must
   * be Fleet's for this component (the canary Deployment and Service, the Rollout and its
   * AnalysisTemplates), and the VirtualService it would steer must carry the component's
   * entity-ref. Answers the conflict, or undefined; reads only.
   */
  async ownershipConflict(
    target: CanaryTarget,
    mode: CanaryMode,
  ): Promise<string | undefined> {
    const s = await this.session(target.cluster);
    try {
      await this.readDeployment(s, target, target.name);
      if (mode === 'rollout') {
        await this.readCustomOwned(
          s,
          target,
          'Rollout',
          'rollouts',
          target.name,
        );
        for (const template of target.analysis?.templates ?? []) {
          await this.readCustomOwned(
            s,
            target,
            'AnalysisTemplate',
            'analysistemplates',
            analysisTemplateName(target, template),
          );
        }
        return undefined;
      }
      await this.readDeployment(s, target, canaryName(target.name));
      if (mode === 'istio') {
        await this.readOwnedService(s, target);
        await this.readSteerableVirtualService(s, target);
      }
      return undefined;
    } catch (error) {
      if (error instanceof OwnershipConflictError) return error.message;
      throw error;
    }
  }

  private async readOwnedService(s: Session, target: CanaryTarget) {
    const name = canaryName(serviceNameFor(target.name));
    try {
      const live = await s.core.readNamespacedService(
        { namespace: target.namespace, name },
        s.opts(),
      );
      assertFleetOwned(
        'Service',
        target.namespace,
        name,
        live,
        entityRefOf(target),
      );
      return live;
    } catch (error) {
      if (isKubeStatus(error, 404)) return undefined;
      throw error;
    }
  }

  private async scale(
    s: Session,
    namespace: string,
    name: string,
    replicas: number,
  ) {
    await s.apps.patchNamespacedDeployment(
      { namespace, name, body: { spec: { replicas } } },
      s.mergePatch(),
    );
  }

  /** Creates the canary Deployment (or leaves it) and returns it as it is live. */
  private async ensureCanary(
    s: Session,
    target: CanaryTarget,
    initial: number,
  ) {
    const name = canaryName(target.name);
    const live = await this.readDeployment(s, target, name);
    if (live) {
      const wanted = canaryDeployment(target, live.spec?.replicas ?? initial);
      // A canary left by an earlier release runs another revision: it takes this one's.
      if (
        JSON.stringify(live.spec?.template.spec?.containers) !==
        JSON.stringify(wanted.spec!.template.spec!.containers)
      ) {
        return s.apps.replaceNamespacedDeployment(
          {
            namespace: target.namespace,
            name,
            body: {
              ...wanted,
              metadata: {
                ...wanted.metadata,
                resourceVersion: live.metadata?.resourceVersion,
              },
            },
          },
          s.opts(),
        );
      }
      return live;
    }
    return s.apps.createNamespacedDeployment(
      { namespace: target.namespace, body: canaryDeployment(target, initial) },
      s.opts(),
    );
  }

  /**
   * Moves the replica split one safe move toward `weight`: the canary grows while the total stays
   * within `replicas + maxSurge`, the stable shrinks while the available pods stay at least
   * `replicas - maxUnavailable`. Reached when both have their share and the canary's are available.
   */
  async replicasStep(
    target: CanaryTarget,
    weight: number,
  ): Promise<StepOutcome> {
    return this.guard(async () => {
      const s = await this.session(target.cluster);
      const total = target.replicas;
      const wantCanary = Math.min(
        total,
        Math.max(1, Math.ceil((total * weight) / 100)),
      );
      const wantStable = Math.max(
        total - wantCanary,
        weight < 100 && total > 1 ? 1 : 0,
      );
      const stable = await this.readDeployment(s, target, target.name);
      if (!stable)
        return {
          kind: 'failed',
          message: `Deployment ${target.namespace}/${target.name} is missing`,
        };
      const canary = await this.ensureCanary(s, target, 0);
      const stableSpec = stable.spec?.replicas ?? 0;
      const canarySpec = canary.spec?.replicas ?? 0;
      const stableAvailable = Math.min(
        stable.status?.availableReplicas ?? 0,
        stableSpec,
      );
      const canaryAvailable = Math.min(
        canary.status?.availableReplicas ?? 0,
        canarySpec,
      );
      const surgeRoom = Math.max(
        0,
        total + target.maxSurge - (stableSpec + canarySpec),
      );
      const up = Math.min(Math.max(0, wantCanary - canarySpec), surgeRoom);
      if (up > 0) {
        await this.scale(
          s,
          target.namespace,
          canaryName(target.name),
          canarySpec + up,
        );
      }
      const spare = Math.max(
        0,
        stableAvailable + canaryAvailable - (total - target.maxUnavailable),
      );
      const down = Math.min(Math.max(0, stableSpec - wantStable), spare);
      if (down > 0) {
        await this.scale(s, target.namespace, target.name, stableSpec - down);
      }
      const split = `canary ${canaryAvailable}/${wantCanary}, stable ${
        stableSpec - down
      }/${wantStable}`;
      // A scale-down waits for nothing: the split holds as soon as it is written.
      if (
        up === 0 &&
        canarySpec === wantCanary &&
        stableSpec - down === wantStable &&
        canaryAvailable >= wantCanary
      ) {
        return {
          kind: 'reached',
          message: `weight ${weight}%: ${split} replicas`,
        };
      }
      return {
        kind: 'waiting',
        message: `moving to weight ${weight}%: ${split} replicas`,
      };
    });
  }

  /**
   * Istio: the canary Deployment sized to the weight and its own Service, then the named
   * VirtualService's routes split between the stable and the canary host.
   */
  async istioStep(target: CanaryTarget, weight: number): Promise<StepOutcome> {
    return this.guard(async () => {
      const s = await this.session(target.cluster);
      const wantCanary = Math.min(
        target.replicas,
        Math.max(1, Math.ceil((target.replicas * weight) / 100)),
      );
      const canary = await this.ensureCanary(s, target, wantCanary);
      if ((canary.spec?.replicas ?? 0) !== wantCanary) {
        await this.scale(
          s,
          target.namespace,
          canaryName(target.name),
          wantCanary,
        );
      }
      try {
        await s.core.createNamespacedService(
          { namespace: target.namespace, body: canaryService(target) },
          s.opts(),
        );
      } catch (error) {
        if (!isKubeStatus(error, 409)) throw error;
        // One of the same name is there: it must be Fleet's canary Service for this component.
        await this.readOwnedService(s, target);
      }
      const available = canary.status?.availableReplicas ?? 0;
      if (
        available < wantCanary ||
        (canary.spec?.replicas ?? 0) !== wantCanary
      ) {
        return {
          kind: 'waiting',
          message: `weight ${weight}%: canary ${available}/${wantCanary} replicas available`,
        };
      }
      return this.setRouteWeights(s, target, weight);
    });
  }

  private async setRouteWeights(
    s: Session,
    target: CanaryTarget,
    weight: number,
  ): Promise<StepOutcome> {
    const vsName = target.istio!.virtualService;
    const ref = {
      group: ISTIO_GROUP,
      version: 'v1beta1',
      namespace: target.namespace,
      plural: 'virtualservices',
      name: vsName,
    };
    const vs = await this.readSteerableVirtualService(s, target);
    if (!vs) {
      return {
        kind: 'failed',
        message: `VirtualService ${target.namespace}/${vsName} not found`,
      };
    }
    const host = serviceNameFor(target.name);
    const canaryHost = canaryName(host);
    const wanted = target.istio!.routes;
    const http: any[] = vs.spec?.http ?? [];
    const chosen = http.filter(
      route => !wanted?.length || wanted.includes(route.name),
    );
    if (chosen.length === 0) {
      return {
        kind: 'failed',
        message: `VirtualService ${
          target.namespace
        }/${vsName} has no route named ${wanted?.join(', ')}`,
      };
    }
    let changed = false;
    for (const route of chosen) {
      const first = (route.route ?? [])[0]?.destination ?? { host };
      const next = [
        { destination: { ...first, host }, weight: 100 - weight },
        ...(weight > 0
          ? [{ destination: { ...first, host: canaryHost }, weight }]
          : []),
      ];
      if (JSON.stringify(route.route) !== JSON.stringify(next)) {
        route.route = next;
        changed = true;
      }
    }
    if (changed) {
      // The body keeps the resourceVersion read: a change meanwhile makes this a 409, not an
      // overwrite.
      await s.custom.replaceNamespacedCustomObject(
        { ...ref, body: vs },
        s.opts(),
      );
    }
    return {
      kind: 'reached',
      message: `weight ${weight}%: VirtualService ${vsName} routes ${
        100 - weight
      }/${weight}`,
    };
  }

  /**
   * Argo Rollouts: the first call makes a Rollout of the stable revision (Argo promotes a first
   * revision at once) and, once it is healthy, scales the Deployment to 0; then the Rollout's
   * template takes the new revision and Fleet follows `status.currentStepIndex` and
   * `status.phase`, promoting past the pause after each weight when asked for the next.
   */
  async rolloutStep(
    target: CanaryTarget,
    weightIndex: number,
  ): Promise<StepOutcome> {
    return this.guard(async () => {
      const s = await this.session(target.cluster);
      const ref = {
        ...ROLLOUTS,
        namespace: target.namespace,
        plural: 'rollouts',
        name: target.name,
      };
      const rollout: any = await this.readCustomOwned(
        s,
        target,
        'Rollout',
        'rollouts',
        target.name,
      );
      if (!rollout) {
        await this.ensureAnalysisTemplates(s, target);
        await s.custom.createNamespacedCustomObject(
          {
            group: ROLLOUTS.group,
            version: ROLLOUTS.version,
            namespace: target.namespace,
            plural: 'rollouts',
            body: this.rolloutManifest(target),
          },
          s.opts(),
        );
        return {
          kind: 'waiting',
          message:
            'Rollout created on the stable revision; waiting for it to be healthy',
        };
      }
      const status = rollout.status ?? {};
      const canaryImage =
        target.canary.deployment.spec!.template.spec!.containers[0].image;
      const onCanary =
        rollout.spec?.template?.spec?.containers?.[0]?.image === canaryImage;
      if (!onCanary) {
        if (status.phase !== 'Healthy') {
          return {
            kind: 'waiting',
            message: `Rollout is ${
              status.phase ?? 'starting'
            } on the stable revision`,
          };
        }
        const deployment = await this.readDeployment(s, target, target.name);
        if (deployment && (deployment.spec?.replicas ?? 0) > 0) {
          await this.scale(s, target.namespace, target.name, 0);
        }
        await s.custom.patchNamespacedCustomObject(
          {
            ...ref,
            body: {
              spec: {
                template: this.rolloutTemplate(
                  target.canary,
                  target.canaryRevision,
                ),
              },
            },
          },
          s.mergePatch(),
        );
        return { kind: 'waiting', message: 'Rollout started the canary' };
      }
      const weight = target.weights[weightIndex];
      const index = Number(status.currentStepIndex ?? 0);
      // Only a step's own pause is Fleet's to promote past: a pause for an inconclusive
      // analysis run, or one a person set, is not.
      const reasons: string[] = (status.pauseConditions ?? []).map(
        (condition: { reason?: string }) => String(condition.reason),
      );
      const atStepPause =
        status.phase === 'Paused' &&
        reasons.includes('CanaryPauseStep') &&
        reasons.every(reason => reason === 'CanaryPauseStep') &&
        !rollout.spec?.paused;
      if (status.abort)
        return {
          kind: 'failed',
          message: status.message ?? 'the Rollout was aborted',
        };
      if (weight >= 100 || weightIndex >= target.weights.length) {
        if (
          status.phase === 'Healthy' &&
          status.stableRS &&
          status.stableRS === status.currentPodHash
        ) {
          return {
            kind: 'reached',
            message: 'Rollout fully promoted: the canary is stable',
          };
        }
        if (atStepPause && index < rolloutSteps(target.weights).length)
          await this.promote(s, ref);
        return {
          kind: 'waiting',
          message: `Rollout ${status.phase ?? ''} at step ${index}`,
        };
      }
      const pauseAt = rolloutPauseIndex(weightIndex);
      if (index === pauseAt && atStepPause) {
        return {
          kind: 'reached',
          message: `weight ${weight}%: Rollout paused at step ${index}`,
        };
      }
      if (index < pauseAt && atStepPause) {
        await this.promote(s, ref);
        return {
          kind: 'waiting',
          message: `Rollout promoted from step ${index}`,
        };
      }
      if (status.phase === 'Degraded')
        return {
          kind: 'failed',
          message: status.message ?? 'the Rollout is Degraded',
        };
      return {
        kind: 'waiting',
        message: `Rollout ${status.phase ?? ''}${
          reasons.length ? ` (${reasons.join(', ')})` : ''
        } at step ${index} toward ${weight}%`,
      };
    });
  }

  /** As `kubectl argo rollouts promote`: clears the pause conditions through the status subresource. */
  private async promote(
    s: Session,
    ref: {
      group: string;
      version: string;
      namespace: string;
      plural: string;
      name: string;
    },
  ) {
    await s.custom.patchNamespacedCustomObjectStatus(
      { ...ref, body: { status: { pauseConditions: null } } },
      s.mergePatch(),
    );
    await s.custom.patchNamespacedCustomObject(
      { ...ref, body: { spec: { paused: false } } },
      s.mergePatch(),
    );
  }

  /** A Rollout's pod template: the revision's, its pods told apart from the Deployment's. */
  private rolloutTemplate(manifests: Manifests, revision: number) {
    const template = structuredClone(manifests.deployment.spec!.template);
    template.metadata = {
      ...template.metadata,
      labels: { ...template.metadata?.labels, [WORKLOAD_LABEL]: 'rollout' },
      annotations: {
        ...template.metadata?.annotations,
        [REVISION_ANNOTATION]: String(revision),
      },
    };
    return template;
  }

  private rolloutManifest(target: CanaryTarget): object {
    const metadata = target.stable.deployment.metadata!;
    const analysis = target.analysis?.templates.length
      ? {
          templates: target.analysis.templates.map(t => ({
            templateName: analysisTemplateName(target, t),
          })),
        }
      : undefined;
    return {
      apiVersion: `${ROLLOUTS.group}/${ROLLOUTS.version}`,
      kind: 'Rollout',
      metadata: {
        name: target.name,
        namespace: target.namespace,
        labels: metadata.labels,
        annotations: metadata.annotations,
      },
      spec: {
        replicas: target.replicas,
        selector: {
          matchLabels: {
            [NAME_LABEL]: target.name,
            [WORKLOAD_LABEL]: 'rollout',
          },
        },
        template: this.rolloutTemplate(target.stable, target.stableRevision),
        strategy: {
          canary: {
            steps: rolloutSteps(target.weights),
            maxSurge: target.maxSurge,
            maxUnavailable: target.maxUnavailable,
            ...(analysis ? { analysis } : {}),
          },
        },
      },
    };
  }

  /** One AnalysisTemplate per template of the strategy, its placeholders filled for this cluster. */
  private async ensureAnalysisTemplates(s: Session, target: CanaryTarget) {
    for (const template of target.analysis?.templates ?? []) {
      const body = {
        apiVersion: `${ROLLOUTS.group}/${ROLLOUTS.version}`,
        kind: 'AnalysisTemplate',
        metadata: {
          name: analysisTemplateName(target, template),
          namespace: target.namespace,
          labels: { [NAME_LABEL]: target.name, [MANAGED_BY_LABEL]: 'fleet' },
          annotations: {
            [ENTITY_REF_ANNOTATION]:
              target.stable.deployment.metadata?.annotations?.[
                ENTITY_REF_ANNOTATION
              ] ?? '',
          },
        },
        spec: {
          metrics: [
            {
              name: template.name,
              interval:
                typeof template.interval === 'number'
                  ? `${template.interval}s`
                  : template.interval ?? '1m',
              failureLimit: template.failureLimit ?? 0,
              successCondition: template.successCondition,
              provider: {
                prometheus: {
                  address: template.provider.prometheus.address,
                  query: fillQuery(
                    template.provider.prometheus.query,
                    target.analysis!.context,
                  ),
                },
              },
            },
          ],
        },
      };
      try {
        await s.custom.createNamespacedCustomObject(
          {
            group: ROLLOUTS.group,
            version: ROLLOUTS.version,
            namespace: target.namespace,
            plural: 'analysistemplates',
            body,
          },
          s.opts(),
        );
      } catch (error) {
        if (!isKubeStatus(error, 409)) throw error;
        // One of that name is there: the Rollout would run it, so it must be Fleet's.
        await this.readCustomOwned(
          s,
          target,
          'AnalysisTemplate',
          'analysistemplates',
          body.metadata.name,
        );
      }
    }
  }

  /**
   * Takes traffic off the canary: the VirtualService back to the stable host only, or the Rollout
   * aborted (`status.abort`, as `kubectl argo rollouts abort` does). Replicas: nothing to do.
   */
  async trafficToStable(
    target: CanaryTarget,
    mode: CanaryMode,
  ): Promise<StepOutcome> {
    return this.guard(async () => {
      const s = await this.session(target.cluster);
      if (mode === 'istio') {
        let outcome: StepOutcome;
        try {
          outcome = await this.setRouteWeights(s, target, 0);
        } catch (error) {
          // One Fleet may not steer was never steered: it sends nothing to the canary.
          if (!(error instanceof OwnershipConflictError)) throw error;
          outcome = { kind: 'failed', message: error.message };
        }
        // A VirtualService that is gone carries no traffic to the canary.
        return outcome.kind === 'failed'
          ? { kind: 'reached', message: outcome.message }
          : outcome;
      }
      if (mode === 'rollout') {
        const ref = {
          ...ROLLOUTS,
          namespace: target.namespace,
          plural: 'rollouts',
          name: target.name,
        };
        let rollout: any;
        try {
          rollout = await s.custom.getNamespacedCustomObject(ref, s.opts());
        } catch (error) {
          if (!isKubeStatus(error, 404)) throw error;
        }
        // Someone else's Rollout of that name is never aborted: Fleet's canary is not in it.
        if (rollout && isFleetOwned(rollout, entityRefOf(target))) {
          if (
            !rollout.status?.abort &&
            rollout.status?.stableRS !== rollout.status?.currentPodHash
          ) {
            await s.custom.patchNamespacedCustomObjectStatus(
              { ...ref, body: { status: { abort: true } } },
              s.mergePatch(),
            );
          }
        }
      }
      return { kind: 'reached', message: 'traffic is on the stable revision' };
    });
  }

  /**
   * Deletes the canary's objects (Deployment, Service, Rollout, AnalysisTemplates) that are
   * Fleet's for this component, each conditionally on the object read; gone is fine, and an
   * object of the same name that is someone else's stays as it is.
   */
  async removeCanary(target: CanaryTarget): Promise<StepOutcome> {
    return this.guard(async () => {
      const s = await this.session(target.cluster);
      const { namespace } = target;
      const entityRef = entityRefOf(target);
      const kept: string[] = [];
      const note = (kind: string, name: string) => (result: string) => {
        if (result === 'foreign') kept.push(`${kind} ${namespace}/${name}`);
      };
      const deployment = canaryName(target.name);
      await deleteIfFleetOwned(
        entityRef,
        () =>
          s.apps.readNamespacedDeployment(
            { namespace, name: deployment },
            s.opts(),
          ),
        body =>
          s.apps.deleteNamespacedDeployment(
            { namespace, name: deployment, body },
            s.opts(),
          ),
      ).then(note('Deployment', deployment));
      const service = canaryName(serviceNameFor(target.name));
      await deleteIfFleetOwned(
        entityRef,
        () =>
          s.core.readNamespacedService({ namespace, name: service }, s.opts()),
        body =>
          s.core.deleteNamespacedService(
            { namespace, name: service, body },
            s.opts(),
          ),
      ).then(note('Service', service));
      const served = new Set(
        (await s.apis.getAPIVersions(undefined, s.opts())).groups.map(
          g => g.name,
        ),
      );
      if (served.has(ROLLOUTS.group)) {
        const custom = async (kind: string, plural: string, name: string) => {
          const ref = { ...ROLLOUTS, namespace, plural, name };
          await deleteIfFleetOwned(
            entityRef,
            () => s.custom.getNamespacedCustomObject(ref, s.opts()),
            body =>
              s.custom.deleteNamespacedCustomObject({ ...ref, body }, s.opts()),
          ).then(note(kind, name));
        };
        await custom('Rollout', 'rollouts', target.name);
        for (const template of target.analysis?.templates ?? []) {
          await custom(
            'AnalysisTemplate',
            'analysistemplates',
            analysisTemplateName(target, template),
          );
        }
      }
      return {
        kind: 'reached',
        message: kept.length
          ? `canary removed; left someone else's ${kept.join(', ')}`
          : 'canary removed',
      };
    });
  }

  /** A Kubernetes error is a step that waits (and is retried), with the API's words. */
  private async guard(fn: () => Promise<StepOutcome>): Promise<StepOutcome> {
    try {
      return await fn();
    } catch (error) {
      // A foreign object in the way does not go away by waiting: the step fails, untouched.
      if (error instanceof OwnershipConflictError) {
        return {
          kind: 'failed',
          message: error.message,
          reason: 'OWNERSHIP_CONFLICT',
        };
      }
      return {
        kind: 'waiting',
        message: describeKubeError(error, this.timeoutMs),
      };
    }
  }
}
