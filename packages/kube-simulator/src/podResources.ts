/**
 * The kinds the workload controllers write (ReplicaSets, Pods, core Events), what the Kubernetes
 * plugin reads, and the field selectors the API server supports on them beyond
 * `metadata.name` / `metadata.namespace`.
 */
import type { ResourceDef } from './resourceDef';

const builtin = {
  builtin: true,
  crd: undefined,
  allowCreateOnUpdate: false,
  nameFormat: 'dns1123-subdomain' as const,
};

export const POD_RESOURCES: ResourceDef[] = [
  {
    ...builtin,
    group: 'apps',
    version: 'v1',
    plural: 'replicasets',
    singular: 'replicaset',
    kind: 'ReplicaSet',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    hasGeneration: true,
  },
  {
    ...builtin,
    group: '',
    version: 'v1',
    plural: 'pods',
    singular: 'pod',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    hasGeneration: false,
    returnsDeletedObject: true,
  },
  {
    ...builtin,
    group: '',
    version: 'v1',
    plural: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    categories: [],
    hasGeneration: false,
  },
];

/**
 * Field selectors by kind, as the API server registers them (`pkg/registry/core/*`): every kind
 * has `metadata.name` and `metadata.namespace`; these add to them.
 */
export const KIND_FIELD_SELECTORS: Record<string, string[]> = {
  Pod: [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.nominatedNodeName',
  ],
  ReplicaSet: ['status.replicas'],
  Event: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
};
