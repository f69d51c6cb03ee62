import { isKubeStatus } from '../../kubernetes/requestOptions';
import { FIELD_MANAGER } from '../../kubernetes/serverSideApply';
import { NAME_LABEL } from '../../deploy/manifests';
import {
  canaryService,
  readOwnedService,
  servesResource,
  WORKLOAD_LABEL,
  type CanaryTarget,
  type Session,
  type StepOutcome,
} from './canaryObjects';
import { setRouteWeights, VIRTUAL_SERVICES } from './virtualService';

/**
 * Before a Rollout with Istio traffic routing is created, what Argo Rollouts needs to steer:
 * the canary's Service (selecting the Rollout's pods; Argo narrows it and the stable Service to
 * their ReplicaSets by the pod-template hash), and each named route of the VirtualService
 * sending to the stable and the canary Service (100/0). `mesh` is false where the strategy
 * names no VirtualService or the cluster serves none: the Rollout then steers by replicas.
 */
export async function prepareIstioRouting(
  s: Session,
  target: CanaryTarget,
): Promise<{ mesh: boolean; failed?: StepOutcome }> {
  if (!target.istio || !(await servesResource(s, VIRTUAL_SERVICES)))
    return { mesh: false };
  const service = canaryService(target);
  service.spec!.selector = {
    [NAME_LABEL]: target.name,
    [WORKLOAD_LABEL]: 'rollout',
  };
  try {
    await s.core.createNamespacedService(
      {
        namespace: target.namespace,
        body: service,
        fieldManager: FIELD_MANAGER,
      },
      s.opts(),
    );
  } catch (error) {
    if (!isKubeStatus(error, 409)) throw error;
    // One of the same name is there: it must be Fleet's canary Service for this component.
    await readOwnedService(s, target);
  }
  const routed = await setRouteWeights(s, target, 0, { keepCanary: true });
  return routed.kind === 'failed'
    ? { mesh: true, failed: routed }
    : { mesh: true };
}
