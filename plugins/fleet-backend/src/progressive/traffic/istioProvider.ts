import type { FleetTrafficProvider } from '@cnp/plugin-fleet-node';
import { isKubeStatus } from '../../kubernetes/requestOptions';
import { FIELD_MANAGER } from '../../kubernetes/serverSideApply';
import { serviceNameFor } from '../../deploy/manifests';
import {
  isSteerableBy,
  OwnershipConflictError,
  ownershipConflict,
} from '../../deploy/ownership';
import {
  canaryName,
  applyCanaryService,
  conflictOf,
  ensureCanary,
  entityRefOf,
  guarded,
  ISTIO_GROUP,
  openSession,
  readDeployment,
  readOwnedService,
  removeCanaryObjects,
  scale,
  servesResource,
  type CanaryTarget,
  type Session,
  type StepOutcome,
} from './canaryObjects';

const VIRTUAL_SERVICES = {
  group: ISTIO_GROUP,
  version: 'v1beta1',
  plural: 'virtualservices',
};

/** Reads the VirtualService Fleet steers; its owner must have annotated it for this component. */
async function readSteerableVirtualService(
  s: Session,
  target: CanaryTarget,
): Promise<any | undefined> {
  const name = target.istio!.virtualService;
  let vs: any;
  try {
    vs = await s.custom.getNamespacedCustomObject(
      { ...VIRTUAL_SERVICES, namespace: target.namespace, name },
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

async function setRouteWeights(
  s: Session,
  target: CanaryTarget,
  weight: number,
): Promise<StepOutcome> {
  const vsName = target.istio!.virtualService;
  const ref = {
    ...VIRTUAL_SERVICES,
    namespace: target.namespace,
    name: vsName,
  };
  const vs = await readSteerableVirtualService(s, target);
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
    // overwrite. The VirtualService is its owner's (Fleet only steers its weights): an update
    // as field manager `fleet`, not an apply that would take its routes over.
    await s.custom.replaceNamespacedCustomObject(
      { ...ref, body: vs, fieldManager: FIELD_MANAGER },
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
 * The canary Deployment sized to the weight and its own Service, then the named VirtualService's
 * routes split between the stable and the canary host.
 */
function istioStep(
  target: CanaryTarget,
  weight: number,
  timeoutMs: number,
): Promise<StepOutcome> {
  return guarded(target, timeoutMs, async s => {
    const wantCanary = Math.min(
      target.replicas,
      Math.max(1, Math.ceil((target.replicas * weight) / 100)),
    );
    const canary = await ensureCanary(s, target, wantCanary);
    if ((canary.spec?.replicas ?? 0) !== wantCanary) {
      await scale(s, target.namespace, canaryName(target.name), wantCanary);
    }
    await applyCanaryService(s, target);
    const available = canary.status?.availableReplicas ?? 0;
    if (available < wantCanary || (canary.spec?.replicas ?? 0) !== wantCanary) {
      return {
        kind: 'waiting',
        message: `weight ${weight}%: canary ${available}/${wantCanary} replicas available`,
      };
    }
    return setRouteWeights(s, target, weight);
  });
}

/** The VirtualService back to the stable host only. */
function istioToStable(
  target: CanaryTarget,
  timeoutMs: number,
): Promise<StepOutcome> {
  return guarded(target, timeoutMs, async s => {
    let outcome: StepOutcome;
    try {
      outcome = await setRouteWeights(s, target, 0);
    } catch (error) {
      // One Fleet may not steer was never steered: it sends nothing to the canary.
      if (!(error instanceof OwnershipConflictError)) throw error;
      outcome = { kind: 'failed', message: error.message };
    }
    // A VirtualService that is gone carries no traffic to the canary.
    return outcome.kind === 'failed'
      ? { kind: 'reached', message: outcome.message }
      : outcome;
  });
}

/**
 * Istio route weights: where the strategy names a VirtualService and the cluster serves
 * `networking.istio.io` VirtualServices.
 */
export function createIstioTrafficProvider(options: {
  requestTimeoutMs: number;
}): FleetTrafficProvider {
  const timeoutMs = options.requestTimeoutMs;
  return {
    id: 'istio',
    description: 'Istio route weights',
    async detect({ cluster, strategy }) {
      if (!strategy.canary.trafficRouting?.istio) return false;
      const s = await openSession(cluster, timeoutMs);
      return servesResource(s, VIRTUAL_SERVICES);
    },
    async ownershipConflict(target) {
      const s = await openSession(target.cluster, timeoutMs);
      return conflictOf(async () => {
        await readDeployment(s, target, target.name);
        await readDeployment(s, target, canaryName(target.name));
        await readOwnedService(s, target);
        await readSteerableVirtualService(s, target);
      });
    },
    step: (target, { weight }) => istioStep(target, weight, timeoutMs),
    trafficToStable: target => istioToStable(target, timeoutMs),
    removeCanary: target => removeCanaryObjects(target, timeoutMs),
  };
}
