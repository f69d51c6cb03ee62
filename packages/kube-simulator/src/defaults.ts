/**
 * Defaulting as the API server does it on every write (create, update,
 * patch), for the fields a client sees come back: Deployment strategy and
 * pod template defaults, Service type/protocol/targetPort, HPA minReplicas
 * and metrics, Namespace finalizers. A subset of the real defaulters, but the
 * values are the real ones, so "what I sent" differs from "what is stored"
 * exactly where it would on a real cluster.
 */
import { ResourceDef } from './resourceDef';
import { defaultSecret, initialStatusOf } from './secretsAndIngresses';
import { asArray, ensureObject, isPlainObject, JsonObject } from './util';

function setIfMissing(obj: JsonObject, key: string, value: unknown) {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

function defaultProbe(probe: unknown) {
  if (!isPlainObject(probe)) return;
  setIfMissing(probe, 'timeoutSeconds', 1);
  setIfMissing(probe, 'periodSeconds', 10);
  setIfMissing(probe, 'successThreshold', 1);
  setIfMissing(probe, 'failureThreshold', 3);
  if (isPlainObject(probe.httpGet))
    setIfMissing(probe.httpGet, 'scheme', 'HTTP');
}

function imagePullPolicy(image: unknown): string {
  const ref = String(image ?? '');
  if (ref.includes('@')) return 'IfNotPresent';
  const lastSegment = ref.split('/').pop() ?? '';
  const tag = lastSegment.includes(':')
    ? lastSegment.split(':').pop()
    : undefined;
  return !tag || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: unknown) {
  if (!isPlainObject(c)) return;
  setIfMissing(c, 'terminationMessagePath', '/dev/termination-log');
  setIfMissing(c, 'terminationMessagePolicy', 'File');
  setIfMissing(c, 'imagePullPolicy', imagePullPolicy(c.image));
  setIfMissing(c, 'resources', {});
  for (const p of asArray(c.ports))
    if (isPlainObject(p)) setIfMissing(p, 'protocol', 'TCP');
  defaultProbe(c.readinessProbe);
  defaultProbe(c.livenessProbe);
  defaultProbe(c.startupProbe);
}

function defaultPodTemplate(template: JsonObject) {
  const meta = ensureObject(template, 'metadata');
  // metav1.Time zero value, serialised as null by Kubernetes 1.30.
  if (!('creationTimestamp' in meta)) meta.creationTimestamp = null;
  const spec = ensureObject(template, 'spec');
  setIfMissing(spec, 'restartPolicy', 'Always');
  setIfMissing(spec, 'terminationGracePeriodSeconds', 30);
  setIfMissing(spec, 'dnsPolicy', 'ClusterFirst');
  setIfMissing(spec, 'securityContext', {});
  setIfMissing(spec, 'schedulerName', 'default-scheduler');
  asArray(spec.containers).forEach(defaultContainer);
  asArray(spec.initContainers).forEach(defaultContainer);
}

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
      break;
  }
}

/** The status a created object starts with (before any controller writes one). */
export function initialStatus(def: ResourceDef, obj: JsonObject) {
  if (initialStatusOf(def, obj)) return;
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
