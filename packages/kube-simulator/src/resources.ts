/**
 * The resource kinds the simulator serves, and the discovery documents
 * (`/api`, `/apis`, `/api/v1`, `/apis/<group>/<version>`) built from them.
 */
import { CONFIG_AND_ACCESS_RESOURCES } from './configAndAccess';
import { POD_RESOURCES } from './podResources';
import { POD_WORKLOAD_RESOURCES } from './podWorkloads';
import type { ResourceDef } from './resourceDef';
import { SECRET_AND_INGRESS_RESOURCES } from './secretsAndIngresses';

const common = { categories: [] as string[], builtin: true, crd: undefined };

export const RESOURCES: ResourceDef[] = [
  {
    ...common,
    group: '',
    version: 'v1',
    plural: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    hasGeneration: false,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-label',
  },
  {
    ...common,
    group: '',
    version: 'v1',
    plural: 'services',
    singular: 'service',
    kind: 'Service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    hasGeneration: false,
    allowCreateOnUpdate: true,
    returnsDeletedObject: true,
    nameFormat: 'dns1035-label',
  },
  {
    ...common,
    group: 'apps',
    version: 'v1',
    plural: 'deployments',
    singular: 'deployment',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    hasGeneration: true,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain',
  },
  {
    ...common,
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    singular: 'poddisruptionbudget',
    kind: 'PodDisruptionBudget',
    namespaced: true,
    shortNames: ['pdb'],
    hasGeneration: true,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain',
  },
  {
    ...common,
    group: 'autoscaling',
    version: 'v2',
    plural: 'horizontalpodautoscalers',
    singular: 'horizontalpodautoscaler',
    kind: 'HorizontalPodAutoscaler',
    namespaced: true,
    shortNames: ['hpa'],
    categories: ['all'],
    hasGeneration: true,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain',
  },
  {
    group: 'argoproj.io',
    version: 'v1alpha1',
    plural: 'rollouts',
    singular: 'rollout',
    kind: 'Rollout',
    namespaced: true,
    shortNames: ['ro'],
    categories: [],
    builtin: false,
    hasGeneration: true,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain',
    crd: 'rollouts.argoproj.io',
  },
  {
    // Shipped with Argo Rollouts (its install.yaml has both CRDs).
    group: 'argoproj.io',
    version: 'v1alpha1',
    plural: 'analysistemplates',
    singular: 'analysistemplate',
    kind: 'AnalysisTemplate',
    namespaced: true,
    shortNames: [],
    categories: [],
    builtin: false,
    hasGeneration: true,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain',
    crd: 'analysistemplates.argoproj.io',
  },
  // Istio's VirtualService CRD serves v1beta1 and v1 (no conversion: the same
  // objects under either apiVersion). The first entry is the storage version.
  ...['v1beta1', 'v1'].map(version => ({
    group: 'networking.istio.io',
    version,
    plural: 'virtualservices',
    singular: 'virtualservice',
    kind: 'VirtualService',
    namespaced: true,
    shortNames: ['vs'],
    categories: ['istio-io', 'networking-istio-io'],
    builtin: false,
    hasGeneration: true,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain' as const,
    crd: 'virtualservices.networking.istio.io',
  })),
  // Istio's DestinationRule (its base chart ships it with VirtualService): the subsets a
  // VirtualService's destinations may name.
  ...['v1beta1', 'v1'].map(version => ({
    group: 'networking.istio.io',
    version,
    plural: 'destinationrules',
    singular: 'destinationrule',
    kind: 'DestinationRule',
    namespaced: true,
    shortNames: ['dr'],
    categories: ['istio-io', 'networking-istio-io'],
    builtin: false,
    hasGeneration: true,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain' as const,
    crd: 'destinationrules.networking.istio.io',
  })),
  // Gateway API's HTTPRoute (its standard channel; v1 is the storage version, v1beta1 the same
  // objects without conversion).
  ...['v1', 'v1beta1'].map(version => ({
    group: 'gateway.networking.k8s.io',
    version,
    plural: 'httproutes',
    singular: 'httproute',
    kind: 'HTTPRoute',
    namespaced: true,
    shortNames: [],
    categories: ['gateway-api'],
    builtin: false,
    hasGeneration: true,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain' as const,
    crd: 'httproutes.gateway.networking.k8s.io',
  })),
  ...SECRET_AND_INGRESS_RESOURCES,
  ...POD_WORKLOAD_RESOURCES,
  ...CONFIG_AND_ACCESS_RESOURCES,
  // ReplicaSets, Pods and Events: what the workload controllers write (podController.ts).
  ...POD_RESOURCES,
];

/** The CRDs a cluster can have, by name: what `setCrd` accepts. */
export const KNOWN_CRDS = [
  'rollouts.argoproj.io',
  'virtualservices.networking.istio.io',
  'httproutes.gateway.networking.k8s.io',
] as const;

/** CRDs installed together: Argo Rollouts' and Istio's install manifests each ship a pair. */
export const CRDS_SHIPPED_WITH: Record<string, string[]> = {
  'rollouts.argoproj.io': [
    'rollouts.argoproj.io',
    'analysistemplates.argoproj.io',
  ],
  'virtualservices.networking.istio.io': [
    'virtualservices.networking.istio.io',
    'destinationrules.networking.istio.io',
  ],
};

/** The version objects of `def`'s resource are stored in (the first one listed). */
export function storageDef(def: ResourceDef): ResourceDef {
  return (
    RESOURCES.find(r => r.group === def.group && r.plural === def.plural) ?? def
  );
}

export function findResource(
  group: string,
  version: string,
  plural: string,
): ResourceDef | undefined {
  return RESOURCES.find(
    r => r.group === group && r.version === version && r.plural === plural,
  );
}

export function resourceForKind(kind: string): ResourceDef | undefined {
  return RESOURCES.find(r => r.kind === kind);
}

const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update'];

export const SERVER_VERSION = {
  major: '1',
  minor: '30',
  gitVersion: 'v1.30.0',
  gitCommit: '7c48c2bd72b9bf5c44d21d7338cc7bea77d0ad2a',
  gitTreeState: 'clean',
  buildDate: '2024-04-17T17:27:03Z',
  goVersion: 'go1.22.2',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export interface DiscoveryOptions {
  /** CRDs installed in the cluster (e.g. 'rollouts.argoproj.io'). */
  crds: ReadonlySet<string>;
  serverAddress: string;
}

function served(def: ResourceDef, opts: DiscoveryOptions): boolean {
  return isServed(def, opts.crds);
}

export function isServed(def: ResourceDef, crds: ReadonlySet<string>): boolean {
  return !def.crd || crds.has(def.crd);
}

export function apiVersionsDoc(opts: DiscoveryOptions) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [
      { clientCIDR: '0.0.0.0/0', serverAddress: opts.serverAddress },
    ],
  };
}

function groupDoc(group: string, versions: string[]) {
  const list = versions.map(v => ({
    groupVersion: `${group}/${v}`,
    version: v,
  }));
  return { name: group, versions: list, preferredVersion: list[0] };
}

function groupVersions(opts: DiscoveryOptions): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const def of RESOURCES) {
    if (!def.group || !served(def, opts)) continue;
    const versions = groups.get(def.group) ?? [];
    if (!versions.includes(def.version)) versions.push(def.version);
    groups.set(def.group, versions);
  }
  return groups;
}

export function apiGroupListDoc(opts: DiscoveryOptions) {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groupVersions(opts)].map(([g, v]) => groupDoc(g, v)),
  };
}

export function apiGroupDoc(group: string, opts: DiscoveryOptions) {
  const versions = groupVersions(opts).get(group);
  if (!versions) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(group, versions) };
}

export function apiResourceListDoc(
  group: string,
  version: string,
  opts: DiscoveryOptions,
) {
  const defs = RESOURCES.filter(
    r => r.group === group && r.version === version && served(r, opts),
  );
  if (defs.length === 0) return undefined;
  const resources: unknown[] = [];
  for (const def of defs) {
    resources.push({
      name: def.plural,
      singularName: def.singular,
      namespaced: def.namespaced,
      kind: def.kind,
      verbs: VERBS,
      ...(def.shortNames.length ? { shortNames: def.shortNames } : {}),
      ...(def.categories.length ? { categories: def.categories } : {}),
    });
    if (def.noStatus) continue;
    resources.push({
      name: `${def.plural}/status`,
      singularName: '',
      namespaced: def.namespaced,
      kind: def.kind,
      verbs: ['get', 'patch', 'update'],
    });
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}
