/**
 * The API server's defaults of a pod template (`spec.template` of the workload kinds): pod spec,
 * containers (image pull policy from the tag, termination message) and probes.
 */
import { asArray, ensureObject, isPlainObject, JsonObject } from './util';

export function setIfMissing(obj: JsonObject, key: string, value: unknown) {
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

export function defaultPodTemplate(template: JsonObject) {
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
