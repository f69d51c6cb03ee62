import type { Json, ObjectHealth } from './types';
import {
  conditionOf,
  hasLoadBalancerIngress,
  health,
  list,
  record,
  text,
  unknown,
} from './fields';

/* gitops-engine's checks for Ingress, HorizontalPodAutoscaler and APIService. */

export function ingressHealth(obj: Json): ObjectHealth {
  return health(hasLoadBalancerIngress(obj) ? 'Healthy' : 'Progressing');
}

const HPA_WAITING = health('Progressing', 'Waiting to Autoscale');

const HPA_DEGRADED: Array<[string, string]> = [
  ['AbleToScale', 'FailedGetScale'],
  ['AbleToScale', 'FailedUpdateScale'],
  ['ScalingActive', 'FailedGetResourceMetric'],
  ['ScalingActive', 'FailedGetObjectMetric'],
  ['ScalingActive', 'FailedGetPodsMetric'],
  ['ScalingActive', 'FailedGetExternalMetric'],
  ['ScalingActive', 'FailedComputeMetricsReplicas'],
  ['ScalingActive', 'InvalidSelector'],
];

function hpaConditionsHealth(conditions: Json[]): ObjectHealth {
  const degraded = conditions.find(c =>
    HPA_DEGRADED.some(
      ([type, reason]) => c.type === type && c.reason === reason,
    ),
  );
  if (degraded) return health('Degraded', text(degraded.message));
  const healthy = conditions.find(
    c =>
      (c.type === 'AbleToScale' || c.type === 'ScalingLimited') &&
      c.status === 'True',
  );
  if (healthy) return health('Healthy', text(healthy.message));
  return HPA_WAITING;
}

export function hpaHealth(obj: Json, version: string): ObjectHealth {
  if (version !== 'v1') {
    return hpaConditionsHealth(list(record(obj.status).conditions));
  }
  // autoscaling/v1 carries its conditions as JSON in an annotation.
  const annotation = record(record(obj.metadata).annotations)[
    'autoscaling.alpha.kubernetes.io/conditions'
  ];
  if (typeof annotation !== 'string') return HPA_WAITING;
  let conditions: unknown;
  try {
    conditions = JSON.parse(annotation);
  } catch (error) {
    return unknown(
      `failed to convert conditions annotation to typed: ${
        (error as Error).message
      }`,
    );
  }
  if (!Array.isArray(conditions) || conditions.length === 0) return HPA_WAITING;
  return hpaConditionsHealth(list(conditions));
}

export function apiServiceHealth(obj: Json): ObjectHealth {
  const available = conditionOf(record(obj.status), 'Available');
  if (!available) return health('Progressing', 'Waiting to be processed');
  const message = `${text(available.reason)}: ${text(available.message)}`;
  return health(
    available.status === 'True' ? 'Healthy' : 'Progressing',
    message,
  );
}
