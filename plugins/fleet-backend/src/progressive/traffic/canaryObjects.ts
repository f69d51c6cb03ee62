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
import type {
  FleetTrafficCluster,
  FleetTrafficStepOutcome,
  FleetTrafficTarget,
} from '@cnp/plugin-fleet-node';
import {
  describeKubeError,
  isKubeStatus,
} from '../../kubernetes/requestOptions';
import {
  FIELD_MANAGER,
  FieldConflictError,
  serverSideApply,
} from '../../kubernetes/serverSideApply';
import {
  ENTITY_REF_ANNOTATION,
  NAME_LABEL,
  serviceNameFor,
  TRACK_LABEL,
} from '../../deploy/manifests';
import { sanitizeK8sName } from '../../kubernetes/sanitizeK8sName';
import {
  assertFleetOwned,
  deleteIfFleetOwned,
  OwnershipConflictError,
} from '../../deploy/ownership';

/** What one cluster's canary needs to know (see `FleetTrafficTarget`). */
export type CanaryTarget = FleetTrafficTarget;
export type StepOutcome = FleetTrafficStepOutcome;

/** The label that tells a canary's pods from the stable ones. */
export { TRACK_LABEL };
/** The label that keeps a Rollout's pods apart from the Deployment's. */
export const WORKLOAD_LABEL = 'cnp.io/workload';
/** The Fleet revision a Rollout's pod template runs. */
export const REVISION_ANNOTATION = 'cnp.io/revision';

export const ROLLOUTS = { group: 'argoproj.io', version: 'v1alpha1' };
export const ISTIO_GROUP = 'networking.istio.io';

/** The Kubernetes APIs of one cluster, for one call of a provider. */
export interface Session {
  apps: AppsV1Api;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  apis: ApisApi;
  autoscaling: AutoscalingV2Api;
  timeoutMs: number;
  opts: () => ConfigurationOptions;
  mergePatch: () => ConfigurationOptions;
}

export async function openSession(
  cluster: FleetTrafficCluster,
  timeoutMs: number,
): Promise<Session> {
  const connection = await cluster.connect();
  const kc = connection.kubeConfig;
  const opts = () => connection.requestOptions(timeoutMs);
  return {
    apps: kc.makeApiClient(AppsV1Api),
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    apis: kc.makeApiClient(ApisApi),
    autoscaling: kc.makeApiClient(AutoscalingV2Api),
    timeoutMs,
    opts,
    mergePatch: () =>
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch, opts()),
  };
}

export const canaryName = (name: string) => `${name}-canary`;
/** The baseline a canary judged against one runs beside it: the stable revision's pods. */
export const baselineName = (name: string) => `${name}-baseline`;

/**
 * The canary's Service: `<service>-canary`, shortened with a hash of the whole name when that
 * would be over the 63 characters a Service name may have.
 */
export const canaryServiceName = (target: Pick<CanaryTarget, 'name'>) =>
  sanitizeK8sName(canaryName(serviceNameFor(target.name)));
/** The baseline's Service under Istio: `<service>-baseline`, shortened as the canary's is. */
export const baselineServiceName = (target: Pick<CanaryTarget, 'name'>) =>
  sanitizeK8sName(baselineName(serviceNameFor(target.name)));

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

export function canaryService(target: CanaryTarget): V1Service {
  const base = structuredClone(target.canary.service);
  base.metadata = {
    ...base.metadata,
    name: canaryServiceName(target),
  };
  base.spec!.selector = { [NAME_LABEL]: target.name, [TRACK_LABEL]: 'canary' };
  return base;
}

export function analysisTemplateName(
  target: CanaryTarget,
  template: { name: string },
) {
  return `${target.name}-${template.name}`.slice(0, 253);
}

/**
 * The strategy's templates an Argo Rollout runs as AnalysisTemplates: the Prometheus ones with a
 * successCondition. An AnalysisTemplate names one of Argo's own providers, so a provider a backend
 * module added cannot be one, and it is a threshold, so a template judged against a baseline
 * (`compare`) cannot be one either; Fleet measures every template itself in every mode, those
 * included, and aborts the Rollout when one fails.
 */
export function rolloutAnalysisTemplates(target: CanaryTarget) {
  return (target.analysis?.templates ?? []).flatMap(template => {
    const { prometheus } = template.provider;
    const { successCondition } = template;
    return prometheus && successCondition !== undefined
      ? [{ ...template, successCondition, prometheus }]
      : [];
  });
}

/** The API groups the cluster serves (`/apis`). */
export async function servedGroups(s: Session): Promise<Set<string>> {
  const groups = await s.apis.getAPIVersions(undefined, s.opts());
  return new Set(groups.groups.map(g => g.name));
}

/**
 * Whether the cluster serves a resource. A group is not enough: Argo CD and Argo Workflows serve
 * argoproj.io without Rollouts.
 */
export async function servesResource(
  s: Session,
  api: { group: string; version: string; plural: string },
): Promise<boolean> {
  if (!(await servedGroups(s)).has(api.group)) return false;
  try {
    const list = await s.custom.getAPIResources(
      { group: api.group, version: api.version },
      s.opts(),
    );
    return list.resources.some(r => r.name === api.plural);
  } catch (error) {
    if (isKubeStatus(error, 404)) return false;
    throw error;
  }
}

/** Whether an HorizontalPodAutoscaler scales the application's Deployment. */
export async function autoscaled(
  s: Session,
  namespace: string,
  name: string,
): Promise<boolean> {
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
export async function readDeployment(
  s: Session,
  target: CanaryTarget,
  name: string,
) {
  const { namespace } = target;
  let live: V1Deployment;
  try {
    live = await s.apps.readNamespacedDeployment({ namespace, name }, s.opts());
  } catch (error) {
    if (isKubeStatus(error, 404)) return undefined;
    throw error;
  }
  assertFleetOwned('Deployment', namespace, name, live, entityRefOf(target));
  return live;
}

/** Reads the canary's Service for change; a foreign one is an ownership conflict. */
export function readOwnedService(s: Session, target: CanaryTarget) {
  return readServiceOf(s, target, canaryServiceName(target));
}

/**
 * Reads one of the release's Services for change (undefined when there is none); a foreign one
 * is an ownership conflict.
 */
export async function readServiceOf(
  s: Session,
  target: CanaryTarget,
  name: string,
): Promise<V1Service | undefined> {
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

/**
 * Sets one Deployment's replicas, as field manager `fleet` (an update of that one field, which
 * the next apply by Fleet takes back as a field Fleet owned before).
 */
export async function scale(
  s: Session,
  namespace: string,
  name: string,
  replicas: number,
) {
  await s.apps.patchNamespacedDeployment(
    {
      namespace,
      name,
      body: { spec: { replicas } },
      fieldManager: FIELD_MANAGER,
    },
    s.mergePatch(),
  );
}

/**
 * Applies the canary Deployment (keeping its live replicas, else `initial`) and returns it as
 * it is live. A canary left by an earlier release takes this one's revision.
 */
export async function ensureCanary(
  s: Session,
  target: CanaryTarget,
  initial: number,
) {
  const name = canaryName(target.name);
  const live = await readDeployment(s, target, name);
  const wanted = canaryDeployment(target, live?.spec?.replicas ?? initial);
  return serverSideApply(
    wanted,
    live,
    {
      patch: (params, options) =>
        s.apps.patchNamespacedDeployment(
          { namespace: target.namespace, name, ...params },
          options,
        ),
      create: (params, options) =>
        s.apps.createNamespacedDeployment(
          { namespace: target.namespace, ...params },
          options,
        ),
    },
    s.opts,
  );
}

/** Applies the canary's Service (when the one of that name, if any, is Fleet's). */
export async function applyCanaryService(s: Session, target: CanaryTarget) {
  const live = await readOwnedService(s, target);
  const body = canaryService(target);
  await serverSideApply(
    body,
    live,
    {
      patch: (params, options) =>
        s.core.patchNamespacedService(
          {
            namespace: target.namespace,
            name: body.metadata!.name!,
            ...params,
          },
          options,
        ),
      create: (params, options) =>
        s.core.createNamespacedService(
          { namespace: target.namespace, ...params },
          options,
        ),
    },
    s.opts,
  );
}

/** Answers an ownership conflict's message, or undefined when `check` found none. */
export async function conflictOf(
  check: () => Promise<unknown>,
): Promise<string | undefined> {
  try {
    await check();
    return undefined;
  } catch (error) {
    if (error instanceof OwnershipConflictError) return error.message;
    throw error;
  }
}

/**
 * Runs one call of a provider on the target's cluster. A Kubernetes error is a step that waits
 * (and is retried), with the API's words.
 */
export async function guarded(
  target: CanaryTarget,
  timeoutMs: number,
  fn: (s: Session) => Promise<StepOutcome>,
): Promise<StepOutcome> {
  try {
    return await fn(await openSession(target.cluster, timeoutMs));
  } catch (error) {
    // Another manager's field is not taken by waiting either: the step fails, with it named.
    if (error instanceof FieldConflictError)
      return { kind: 'failed', message: error.message };
    // A foreign object in the way does not go away by waiting: the step fails, untouched.
    if (error instanceof OwnershipConflictError) {
      return {
        kind: 'failed',
        message: error.message,
        reason: 'OWNERSHIP_CONFLICT',
      };
    }
    // An object the API server refuses as invalid stays refused: waiting would never end.
    if (isKubeStatus(error, 400) || isKubeStatus(error, 422)) {
      return {
        kind: 'failed',
        message: `the API server refused it: ${describeKubeError(error)}`,
      };
    }
    return { kind: 'waiting', message: describeKubeError(error, timeoutMs) };
  }
}

/**
 * Deletes the canary's objects (Deployments, the baseline's too, Service, Rollout, AnalysisTemplates) that are
 * Fleet's for this component, each conditionally on the object read; gone is fine, and an
 * object of the same name that is someone else's stays as it is. Whatever the cluster's mode
 * was: one of Fleet's providers cleans up after any of them.
 */
export function removeCanaryObjects(
  target: CanaryTarget,
  timeoutMs: number,
): Promise<StepOutcome> {
  return guarded(target, timeoutMs, async s => {
    const { namespace } = target;
    const entityRef = entityRefOf(target);
    const kept: string[] = [];
    const note = (kind: string, name: string) => (result: string) => {
      if (result === 'foreign') kept.push(`${kind} ${namespace}/${name}`);
    };
    // The baseline goes with the canary, whichever mode ran it.
    for (const deployment of [
      canaryName(target.name),
      baselineName(target.name),
    ]) {
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
    }
    for (const service of [
      canaryServiceName(target),
      baselineServiceName(target),
    ]) {
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
    }
    if ((await servedGroups(s)).has(ROLLOUTS.group)) {
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
      for (const template of rolloutAnalysisTemplates(target)) {
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

/** The HorizontalPodAutoscaler check of the providers that size a canary by replicas. */
export async function autoscalerRefusal(
  options: { cluster: FleetTrafficCluster; namespace: string; name: string },
  timeoutMs: number,
  besides = '',
): Promise<string | undefined> {
  const s = await openSession(options.cluster, timeoutMs);
  if (!(await autoscaled(s, options.namespace, options.name))) return undefined;
  return `a HorizontalPodAutoscaler scales ${options.name}; a canary sized by replicas${besides} would fight it`;
}
