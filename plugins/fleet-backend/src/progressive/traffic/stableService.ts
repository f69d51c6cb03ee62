import type { V1Service } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../../kubernetes/serverSideApply';
import { serviceNameFor } from '../../deploy/manifests';
import { OwnershipConflictError } from '../../deploy/ownership';
import {
  readDeployment,
  readServiceOf,
  TRACK_LABEL,
  type CanaryTarget,
  type Session,
} from './canaryObjects';

/** The application's Service, for change; undefined when it is gone. */
function readStableService(
  s: Session,
  target: CanaryTarget,
): Promise<V1Service | undefined> {
  return readServiceOf(s, target, serviceNameFor(target.name));
}

/** The label Argo Rollouts adds to the selectors of a Rollout's stable and canary Services. */
export const ROLLOUT_HASH_LABEL = 'rollouts-pod-template-hash';

async function patchSelector(
  s: Session,
  target: CanaryTarget,
  selector: Record<string, string | null>,
) {
  await s.core.patchNamespacedService(
    {
      namespace: target.namespace,
      name: serviceNameFor(target.name),
      body: { spec: { selector } },
      fieldManager: FIELD_MANAGER,
    },
    s.mergePatch(),
  );
}

/**
 * The application's Service narrowed to the stable pods (`cnp.io/track: stable` added to its
 * selector), as Argo Rollouts adds the pod-template hash: without it the Service also selects
 * the canary's pods, and the canary gets more than its weight. A Service's selector may change,
 * a Deployment's may not: the stable Deployment's pod template carries the label (Fleet's
 * manifests put it there) and keeps its selector. Answers why it cannot, when the stable pods
 * do not carry the label (a workload applied by an older Fleet or another manifest source).
 */
export async function narrowStableService(
  s: Session,
  target: CanaryTarget,
): Promise<string | undefined> {
  const stable = await readDeployment(s, target, target.name);
  if (stable?.spec?.template.metadata?.labels?.[TRACK_LABEL] !== 'stable')
    return `the stable pods carry no ${TRACK_LABEL}=stable label: the canary's share also includes part of the stable Service's`;
  const service = await readStableService(s, target);
  if (service && service.spec?.selector?.[TRACK_LABEL] !== 'stable')
    await patchSelector(s, target, { [TRACK_LABEL]: 'stable' });
  return undefined;
}

/**
 * The application's Service back to selecting every pod of the application: without the track
 * Fleet added for an Istio canary, nor the pod-template hash Argo Rollouts added for a Rollout
 * with traffic routing (which would select none of the Deployment's pods once the Rollout goes).
 */
export async function widenStableService(s: Session, target: CanaryTarget) {
  let service: V1Service | undefined;
  try {
    service = await readStableService(s, target);
  } catch (error) {
    // Someone else's Service of that name is left as it is: Fleet never narrowed it.
    if (error instanceof OwnershipConflictError) return;
    throw error;
  }
  const selector = service?.spec?.selector ?? {};
  const added = [TRACK_LABEL, ROLLOUT_HASH_LABEL].filter(k => k in selector);
  if (added.length)
    await patchSelector(
      s,
      target,
      Object.fromEntries(added.map(k => [k, null])),
    );
}
