/**
 * Defaulting as the API server does it on every write (create, update,
 * patch), for the fields a client sees come back: Deployment strategy and
 * pod template defaults, Service type/protocol/targetPort, HPA minReplicas
 * and metrics, Namespace finalizers. A subset of the real defaulters, but the
 * values are the real ones, so "what I sent" differs from "what is stored"
 * exactly where it would on a real cluster.
 */
import { defaultConfigOrAccess, initialClaimStatus } from './configAndAccess';
import { defaultPodTemplate, setIfMissing } from './podTemplateDefaults';
import { defaultPodWorkload } from './podWorkloads';
import { ResourceDef } from './resourceDef';
import { defaultSecret, initialStatusOf } from './secretsAndIngresses';
import { asArray, ensureObject, isPlainObject, JsonObject } from './util';

function defaultDeployment(obj: JsonObject) {
  const spec = ensureObject(obj, 'spec');
  setIfMissing(spec, 'replicas', 1);
  const strategy = ensureObject(spec, 'strategy');
  setIfMissing(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const ru = ensureObject(strategy, 'rollingUpdate');
    setIfMissing(ru, 'maxUnavailable', '25%');
    setIfMissing(ru, 'maxSurge', '25%');
  }
  setIfMissing(spec, 'revisionHistoryLimit', 10);
  setIfMissing(spec, 'progressDeadlineSeconds', 600);
  defaultPodTemplate(ensureObject(spec, 'template'));
}

function defaultService(obj: JsonObject) {
  const spec = ensureObject(obj, 'spec');
  setIfMissing(spec, 'type', 'ClusterIP');
  const type = spec.type;
  if (type !== 'ExternalName') {
    setIfMissing(spec, 'sessionAffinity', 'None');
    setIfMissing(spec, 'ipFamilies', ['IPv4']);
    setIfMissing(spec, 'ipFamilyPolicy', 'SingleStack');
    setIfMissing(spec, 'internalTrafficPolicy', 'Cluster');
  }
  if (type === 'NodePort' || type === 'LoadBalancer') {
    setIfMissing(spec, 'externalTrafficPolicy', 'Cluster');
  }
  if (type === 'LoadBalancer')
    setIfMissing(spec, 'allocateLoadBalancerNodePorts', true);
  for (const p of asArray(spec.ports)) {
    if (!isPlainObject(p)) continue;
    setIfMissing(p, 'protocol', 'TCP');
    setIfMissing(p, 'targetPort', p.port);
  }
}

function defaultHpa(obj: JsonObject) {
  const spec = ensureObject(obj, 'spec');
  setIfMissing(spec, 'minReplicas', 1);
  if (asArray(spec.metrics).length === 0) {
    spec.metrics = [
      {
        type: 'Resource',
        resource: {
          name: 'cpu',
          target: { type: 'Utilization', averageUtilization: 80 },
        },
      },
    ];
  }
}

function defaultNamespace(obj: JsonObject) {
  const meta = ensureObject(obj, 'metadata');
  const labels = ensureObject(meta, 'labels');
  labels['kubernetes.io/metadata.name'] = String(meta.name);
  const spec = ensureObject(obj, 'spec');
  setIfMissing(spec, 'finalizers', ['kubernetes']);
}

/** Mutates `obj` in place with the defaults of its kind. */
export function applyDefaults(def: ResourceDef, obj: JsonObject): void {
  switch (def.kind) {
    case 'Deployment':
      defaultDeployment(obj);
      break;
    case 'Service':
      defaultService(obj);
      break;
    case 'HorizontalPodAutoscaler':
      defaultHpa(obj);
      break;
    case 'Namespace':
      defaultNamespace(obj);
      break;
    case 'Secret':
      defaultSecret(obj);
      break;
    default:
      defaultPodWorkload(def, obj);
      defaultConfigOrAccess(def, obj);
      break;
  }
}

/** The status a created object starts with (before any controller writes one). */
export function initialStatus(def: ResourceDef, obj: JsonObject) {
  if (initialStatusOf(def, obj) || initialClaimStatus(def, obj)) return;
  if (def.noStatus) {
    delete obj.status;
    return;
  }
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
