/**
 * A pod as a workload controller creates it from its pod template: owned by the controller,
 * scheduled on a node, with the API server's pod defaults, Pending until the kubelet reports.
 */
import { randomInt } from 'node:crypto';
import { nameOf, namespaceOf, ownerReference } from './podObjects';
import { qosClass } from './podStatus';
import { asObject, clone, JsonObject } from './util';

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Five random characters, as `generateName` appends. */
export function randomSuffix(): string {
  let out = '';
  for (let i = 0; i < 5; i++)
    out += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return out;
}

export interface NewPodOptions {
  /** The controller (a ReplicaSet, StatefulSet or DaemonSet), its kind and apiVersion. */
  owner: JsonObject;
  ownerKind: string;
  ownerApiVersion: string;
  template: JsonObject;
  name: string;
  /** Set when the name was generated (`<owner>-`), not for a StatefulSet's ordinal names. */
  generateName?: string;
  node: string;
  /** Labels the controller adds to the template's. */
  labels?: Record<string, string>;
  /** Pod spec fields the controller sets (a StatefulSet pod's hostname). */
  spec?: JsonObject;
}

/** A new pod of `template`, scheduled on `node`. */
export function newPod(options: NewPodOptions): JsonObject {
  const { owner, template } = options;
  const templateMeta = asObject(template.metadata) ?? {};
  const spec = { ...clone(asObject(template.spec) ?? {}), ...options.spec };
  spec.nodeName = options.node;
  spec.restartPolicy = spec.restartPolicy ?? 'Always';
  spec.schedulerName = spec.schedulerName ?? 'default-scheduler';
  spec.serviceAccountName = spec.serviceAccountName ?? 'default';
  spec.terminationGracePeriodSeconds = spec.terminationGracePeriodSeconds ?? 30;
  spec.dnsPolicy = spec.dnsPolicy ?? 'ClusterFirst';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: options.name,
      ...(options.generateName ? { generateName: options.generateName } : {}),
      namespace: namespaceOf(owner),
      labels: {
        ...clone(asObject(templateMeta.labels) ?? {}),
        ...options.labels,
      },
      ...(templateMeta.annotations
        ? { annotations: clone(templateMeta.annotations) }
        : {}),
      ownerReferences: [
        ownerReference(options.ownerKind, options.ownerApiVersion, owner),
      ],
    },
    spec,
    status: { phase: 'Pending', qosClass: qosClass(spec) },
  };
}

/** `<owner>-<5 random characters>`, and the generateName it came from. */
export function generatedName(owner: JsonObject): {
  name: string;
  generateName: string;
} {
  const generateName = `${nameOf(owner)}-`;
  return { name: `${generateName}${randomSuffix()}`, generateName };
}
