import type { FleetTrafficProvider } from '@cnp/plugin-fleet-node';
import { isKubeStatus } from '../../kubernetes/requestOptions';
import {
  FIELD_MANAGER,
  serverSideApply,
} from '../../kubernetes/serverSideApply';
import {
  ENTITY_REF_ANNOTATION,
  MANAGED_BY_LABEL,
  NAME_LABEL,
} from '../../deploy/manifests';
import { assertFleetOwned, isFleetOwned } from '../../deploy/ownership';
import { fillQuery } from '../analysis';
import { prepareIstioRouting } from './rolloutIstio';
import {
  rolloutManifest,
  rolloutPauseIndex,
  rolloutSteps,
  rolloutTemplate,
} from './rolloutManifest';
import { widenStableService } from './stableService';
import {
  analysisTemplateName,
  rolloutAnalysisTemplates,
  autoscalerRefusal,
  conflictOf,
  entityRefOf,
  guarded,
  openSession,
  readDeployment,
  removeCanaryObjects,
  ROLLOUTS,
  scale,
  servesResource,
  type CanaryTarget,
  type Session,
  type StepOutcome,
} from './canaryObjects';

type ObjectRef = {
  group: string;
  version: string;
  namespace: string;
  plural: string;
  name: string;
};

const rolloutRef = (target: CanaryTarget): ObjectRef => ({
  ...ROLLOUTS,
  namespace: target.namespace,
  plural: 'rollouts',
  name: target.name,
});

/** Applies an argoproj.io object of Fleet's (its ownership checked by the caller). */
async function applyCustom(
  s: Session,
  target: CanaryTarget,
  plural: string,
  body: any,
  live: any,
): Promise<void> {
  await serverSideApply(
    body,
    live,
    {
      patch: (params, options) =>
        s.custom.patchNamespacedCustomObject(
          {
            ...ROLLOUTS,
            namespace: target.namespace,
            plural,
            name: body.metadata.name,
            ...params,
          },
          options,
        ),
      create: (params, options) =>
        s.custom.createNamespacedCustomObject(
          { ...ROLLOUTS, namespace: target.namespace, plural, ...params },
          options,
        ),
    },
    s.opts,
  );
}

/** Reads an argoproj.io object for change; a foreign one is an ownership conflict. */
async function readCustomOwned(
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

/** As `kubectl argo rollouts promote`: clears the pause conditions through the status subresource. */
async function promote(s: Session, ref: ObjectRef) {
  await s.custom.patchNamespacedCustomObjectStatus(
    {
      ...ref,
      body: { status: { pauseConditions: null } },
      fieldManager: FIELD_MANAGER,
    },
    s.mergePatch(),
  );
  await s.custom.patchNamespacedCustomObject(
    { ...ref, body: { spec: { paused: false } }, fieldManager: FIELD_MANAGER },
    s.mergePatch(),
  );
}

/**
 * One AnalysisTemplate per Prometheus template of the strategy, its placeholders filled for this
 * cluster.
 */
async function ensureAnalysisTemplates(s: Session, target: CanaryTarget) {
  for (const template of rolloutAnalysisTemplates(target)) {
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
            // Unset, Argo's default is Fleet's: 4 errors in a row.
            ...(template.consecutiveErrorLimit !== undefined && {
              consecutiveErrorLimit: template.consecutiveErrorLimit,
            }),
            successCondition: template.successCondition,
            provider: {
              prometheus: {
                address: template.prometheus.address,
                query: fillQuery(
                  template.prometheus.query,
                  target.analysis!.context,
                ),
              },
            },
          },
        ],
      },
    };
    // One of that name that is there must be Fleet's: the Rollout would run it.
    const live = await readCustomOwned(
      s,
      target,
      'AnalysisTemplate',
      'analysistemplates',
      body.metadata.name,
    );
    await applyCustom(s, target, 'analysistemplates', body, live);
  }
}

/**
 * Until the Rollout runs the new revision: creates it on the stable revision (Argo promotes a
 * first revision at once) and, once it is healthy, scales the Deployment to 0 and gives the
 * Rollout's template the new revision. Undefined once the Rollout is on the canary.
 */
async function startRollout(
  s: Session,
  target: CanaryTarget,
  rollout: any,
): Promise<StepOutcome | undefined> {
  if (!rollout) {
    await ensureAnalysisTemplates(s, target);
    const { mesh, failed } = await prepareIstioRouting(s, target);
    if (failed) return failed;
    await applyCustom(
      s,
      target,
      'rollouts',
      rolloutManifest(target, mesh),
      undefined,
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
  if (rollout.spec?.template?.spec?.containers?.[0]?.image === canaryImage)
    return undefined;
  if (status.phase !== 'Healthy') {
    return {
      kind: 'waiting',
      message: `Rollout is ${
        status.phase ?? 'starting'
      } on the stable revision`,
    };
  }
  const deployment = await readDeployment(s, target, target.name);
  if (deployment && (deployment.spec?.replicas ?? 0) > 0) {
    await scale(s, target.namespace, target.name, 0);
  }
  await s.custom.patchNamespacedCustomObject(
    {
      ...rolloutRef(target),
      body: {
        spec: {
          template: rolloutTemplate(target.canary, target.canaryRevision),
        },
      },
      fieldManager: FIELD_MANAGER,
    },
    s.mergePatch(),
  );
  return { kind: 'waiting', message: 'Rollout started the canary' };
}

/**
 * Once the Rollout runs the new revision: Fleet follows `status.currentStepIndex` and
 * `status.phase`, promoting past the pause after each weight when asked for the next.
 */
async function followRollout(
  s: Session,
  target: CanaryTarget,
  rollout: any,
  weightIndex: number,
): Promise<StepOutcome> {
  const ref = rolloutRef(target);
  const status = rollout.status ?? {};
  const weight = target.weights[weightIndex];
  const index = Number(status.currentStepIndex ?? 0);
  // Only a step's own pause is Fleet's to promote past: a pause for an inconclusive analysis
  // run, or one a person set, is not.
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
      await promote(s, ref);
    return {
      kind: 'waiting',
      message: `Rollout completing${status.phase ? ` (${status.phase})` : ''}`,
    };
  }
  const pauseAt = rolloutPauseIndex(weightIndex);
  // The messages name no Argo step: its step numbers are not the release's, which is shown.
  if (index === pauseAt && atStepPause) {
    return {
      kind: 'reached',
      message: `weight ${weight}%: Rollout paused at this weight`,
    };
  }
  if (index < pauseAt && atStepPause) {
    await promote(s, ref);
    return { kind: 'waiting', message: 'Rollout promoted past a pause' };
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
}

function rolloutStep(
  target: CanaryTarget,
  weightIndex: number,
  timeoutMs: number,
): Promise<StepOutcome> {
  return guarded(target, timeoutMs, async s => {
    const rollout = await readCustomOwned(
      s,
      target,
      'Rollout',
      'rollouts',
      target.name,
    );
    return (
      (await startRollout(s, target, rollout)) ??
      followRollout(s, target, rollout, weightIndex)
    );
  });
}

/** The Rollout aborted (`status.abort`, as `kubectl argo rollouts abort` does). */
function abortRollout(
  target: CanaryTarget,
  timeoutMs: number,
): Promise<StepOutcome> {
  return guarded(target, timeoutMs, async s => {
    const ref = rolloutRef(target);
    let rollout: any;
    try {
      rollout = await s.custom.getNamespacedCustomObject(ref, s.opts());
    } catch (error) {
      if (!isKubeStatus(error, 404)) throw error;
    }
    // Someone else's Rollout of that name is never aborted: Fleet's canary is not in it.
    if (
      rollout &&
      isFleetOwned(rollout, entityRefOf(target)) &&
      !rollout.status?.abort &&
      rollout.status?.stableRS !== rollout.status?.currentPodHash
    ) {
      await s.custom.patchNamespacedCustomObjectStatus(
        {
          ...ref,
          body: { status: { abort: true } },
          fieldManager: FIELD_MANAGER,
        },
        s.mergePatch(),
      );
    }
    return { kind: 'reached', message: 'traffic is on the stable revision' };
  });
}

/**
 * Argo Rollouts, where the cluster serves `argoproj.io` Rollouts: a Rollout takes the
 * Deployment's place and runs the strategy's weights as its steps, with the strategy's analysis
 * as AnalysisTemplates; it carries the traffic to 100 % itself.
 */
export function createRolloutTrafficProvider(options: {
  requestTimeoutMs: number;
}): FleetTrafficProvider {
  const timeoutMs = options.requestTimeoutMs;
  return {
    id: 'rollout',
    description: 'an Argo Rollout',
    stepsToFull: true,
    async detect({ cluster }) {
      const s = await openSession(cluster, timeoutMs);
      return servesResource(s, { ...ROLLOUTS, plural: 'rollouts' });
    },
    startRefusal: request =>
      autoscalerRefusal(request, timeoutMs, ' (or a Rollout beside it)'),
    async ownershipConflict(target) {
      const s = await openSession(target.cluster, timeoutMs);
      return conflictOf(async () => {
        await readDeployment(s, target, target.name);
        await readCustomOwned(s, target, 'Rollout', 'rollouts', target.name);
        for (const template of rolloutAnalysisTemplates(target)) {
          await readCustomOwned(
            s,
            target,
            'AnalysisTemplate',
            'analysistemplates',
            analysisTemplateName(target, template),
          );
        }
      });
    },
    step: (target, { weightIndex }) =>
      rolloutStep(target, weightIndex, timeoutMs),
    // Once the stable workload runs the new revision, the Rollout is fully promoted: only a
    // rollback aborts it.
    trafficToStable: (target, { cause }) =>
      cause === 'rollback'
        ? abortRollout(target, timeoutMs)
        : guarded(target, timeoutMs, async () => ({
            kind: 'reached',
            message: 'traffic is on the stable revision',
          })),
    removeCanary: async target => {
      // The application's Service first selects the Deployment's pods again (Argo Rollouts
      // narrowed it to the Rollout's for traffic routing), then the Rollout goes.
      const widened = await guarded(target, timeoutMs, async s => {
        await widenStableService(s, target);
        return { kind: 'reached', message: 'Service selects the Deployment' };
      });
      if (widened.kind !== 'reached') return widened;
      return removeCanaryObjects(target, timeoutMs);
    },
  };
}
