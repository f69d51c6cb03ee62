/**
 * The status the HPA controller (kube-controller-manager's podautoscaler, autoscaling/v2) writes,
 * with the reasons and messages of its source. There are no metrics in the simulator: the
 * metrics are taken to ask for the replica count the target's owner gave it (a steady load),
 * which the controller clamps to `[minReplicas, maxReplicas]`.
 *
 * - The target cannot be read (no such kind, or no such object): `AbleToScale` False
 *   `FailedGetScale`, and nothing else changes, as the controller returns before computing.
 * - The target has 0 replicas (and `minReplicas` is not 0): scaling is disabled, `ScalingActive`
 *   False `ScalingDisabled`.
 * - Otherwise `AbleToScale` True (`SucceededRescale` on the pass that changed the target's
 *   replicas, `ReadyForNewScale` after), `ScalingActive` True `ValidMetricFound`, and
 *   `ScalingLimited` True `TooFewReplicas`/`TooManyReplicas` while the clamp holds the count,
 *   False `DesiredWithinRange` otherwise. `lastScaleTime` is the time of the last rescale.
 */
import { Condition, mergeConditions } from './conditions';
import { asArray, asObject, JsonObject, rfc3339 } from './util';

/** What the HPA controller found this pass. */
export type HpaObservation =
  | { kind: 'missing'; error: string }
  | {
      kind: 'found';
      /** The target's `spec.replicas` before this pass. */
      current: number;
      /** What the (simulated) metrics ask for. */
      recommended: number;
      /** Whether this pass changed the target's replicas. */
      rescaled: boolean;
    };

/** The replica count the HPA sets for a recommendation (0 replicas: scaling disabled). */
export function hpaDesired(
  hpa: JsonObject,
  current: number,
  recommended: number,
): { desired: number; limit?: 'TooFewReplicas' | 'TooManyReplicas' } {
  const spec = asObject(hpa.spec) ?? {};
  const min = typeof spec.minReplicas === 'number' ? spec.minReplicas : 1;
  const max =
    typeof spec.maxReplicas === 'number' ? spec.maxReplicas : recommended;
  if (current === 0 && min !== 0) return { desired: 0 };
  if (recommended < min) return { desired: min, limit: 'TooFewReplicas' };
  if (recommended > max) return { desired: max, limit: 'TooManyReplicas' };
  return { desired: recommended };
}

/** The name the controller gives the metric it computed the replica count from. */
function metricName(hpa: JsonObject): string {
  const first = asObject(asArray(asObject(hpa.spec)?.metrics)[0]) ?? {};
  const resource =
    asObject(first.resource) ?? asObject(first.containerResource);
  if (resource) {
    const utilization =
      asObject(resource.target)?.type === 'Utilization'
        ? ' utilization (percentage of request)'
        : '';
    const prefix = first.type === 'ContainerResource' ? 'container ' : '';
    return `${String(resource.name)} ${prefix}resource${utilization}`;
  }
  const source =
    asObject(first.pods) ?? asObject(first.object) ?? asObject(first.external);
  const name = String(asObject(source?.metric)?.name ?? '');
  if (first.type === 'Pods') return `pods metric ${name}`;
  if (first.type === 'Object') {
    const kind = asObject(asObject(first.object)?.describedObject)?.kind;
    return `${String(kind)} metric ${name}`;
  }
  return `external metric ${name}`;
}

/** The HPA's status after one pass of the controller over `observation`. */
export function hpaStatus(
  hpa: JsonObject,
  observation: HpaObservation,
  now: number,
): JsonObject {
  const previous = asObject(hpa.status) ?? {};
  const status: JsonObject = { ...previous };
  status.observedGeneration = asObject(hpa.metadata)?.generation;
  const old = asArray(previous.conditions).map(c => asObject(c) ?? {});
  const set: Condition[] = [];
  if (observation.kind === 'missing') {
    set.push({
      type: 'AbleToScale',
      status: 'False',
      reason: 'FailedGetScale',
      message: `the HPA controller was unable to get the target's current scale: ${observation.error}`,
    });
  } else {
    const { current, recommended, rescaled } = observation;
    const { desired, limit } = hpaDesired(hpa, current, recommended);
    status.currentReplicas = current;
    status.desiredReplicas = desired;
    if (rescaled) status.lastScaleTime = rfc3339(now);
    if (desired === 0 && current === 0) {
      set.push(
        {
          type: 'AbleToScale',
          status: 'True',
          reason: 'SucceededGetScale',
          message:
            "the HPA controller was able to get the target's current scale",
        },
        {
          type: 'ScalingActive',
          status: 'False',
          reason: 'ScalingDisabled',
          message:
            'scaling is disabled since the replica count of the target is zero',
        },
      );
    } else {
      set.push(
        rescaled
          ? {
              type: 'AbleToScale',
              status: 'True',
              reason: 'SucceededRescale',
              message: `the HPA controller was able to update the target scale to ${desired}`,
            }
          : {
              type: 'AbleToScale',
              status: 'True',
              reason: 'ReadyForNewScale',
              message: 'recommended size matches current size',
            },
        {
          type: 'ScalingActive',
          status: 'True',
          reason: 'ValidMetricFound',
          message: `the HPA was able to successfully calculate a replica count from ${metricName(
            hpa,
          )}`,
        },
        limitCondition(limit),
      );
    }
  }
  // The controller sets some conditions each pass and keeps the others as they were.
  const kept = old.filter(c => !set.some(s => s.type === c.type));
  const merged = mergeConditions(old, set, now).map(c => {
    const rest: Partial<Condition> = { ...c };
    delete rest.lastUpdateTime; // HPA conditions have a transition time only
    return rest;
  });
  const order = ['AbleToScale', 'ScalingActive', 'ScalingLimited'];
  status.conditions = [...kept, ...merged].sort(
    (a, b) => order.indexOf(String(a.type)) - order.indexOf(String(b.type)),
  );
  return status;
}

function limitCondition(
  limit: 'TooFewReplicas' | 'TooManyReplicas' | undefined,
): Condition {
  if (limit === 'TooFewReplicas')
    return {
      type: 'ScalingLimited',
      status: 'True',
      reason: limit,
      message:
        'the desired replica count is less than the minimum replica count',
    };
  if (limit === 'TooManyReplicas')
    return {
      type: 'ScalingLimited',
      status: 'True',
      reason: limit,
      message:
        'the desired replica count is more than the maximum replica count',
    };
  return {
    type: 'ScalingLimited',
    status: 'False',
    reason: 'DesiredWithinRange',
    message: 'the desired count is within the acceptable range',
  };
}
