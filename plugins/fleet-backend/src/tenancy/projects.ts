import { type Config } from '@backstage/config';
import { configGroupRef } from '../catalog/entityRefs';
import type { ClusterSelector } from '@cnp/plugin-fleet-common';
import { parseLabelSelector } from '../kubernetes/labelSelector';
import {
  DEFAULT_POD_SECURITY_LEVEL,
  POD_SECURITY_LEVELS,
  type PodSecurityLevel,
} from './podSecurity';

/**
 * A project: what the components of some owners may make Fleet touch (after Argo CD's
 * AppProjects). Fleet acts on clusters with its own credentials, so a team reaches only the
 * clusters, namespaces, Secrets and Ingress hosts its project names.
 */
export interface FleetProject {
  name: string;
  /** Full entity refs of the owners whose components belong here (`group:default/payments`). */
  owners: string[];
  /** The clusters it may use: by name and/or by labels; undefined: every cluster. */
  clusters?: { names?: string[]; selector?: ClusterSelector; text?: string };
  /**
   * Namespace patterns (`*` matches any run of characters). Only a namespace named exactly,
   * without a `*`, may be created by Fleet. `{app}` stands for the application's name.
   */
  namespaces: string[];
  /** Patterns of the Secret and ConfigMap names its env references and TLS may name. */
  secrets: string[];
  /** Patterns an Ingress host must match; empty: no Ingress. */
  ingressHosts: string[];
  /**
   * Patterns of the URLs its components' own manifests may be read from (`*` any run of
   * characters, `{app}` the application's name); undefined: any the portal can read.
   */
  sources?: string[];
  /** The kinds of manifests it may apply (for manifests brought from repositories). */
  kinds: { allow: string[]; deny: string[] };
  /**
   * The Pod Security Standards level the pod templates of its manifests meet (`baseline` unless
   * it names another): Fleet applies them with its own credentials on nodes many teams share.
   */
  podSecurity: PodSecurityLevel;
  /** The built-in project used when none is configured. */
  builtIn?: boolean;
}

/** Namespaces no project may name, whatever its patterns say (and the default forbidden ones). */
export const SYSTEM_NAMESPACES: string[] = [
  'kube-system',
  'kube-public',
  'kube-node-lease',
];

/** The kinds a project may apply when it names none: namespaced kinds only. */
export const DEFAULT_PROJECT_KINDS = [
  'Deployment',
  'StatefulSet',
  'Job',
  'CronJob',
  'Service',
  'ConfigMap',
  'Secret',
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'Ingress',
  'PodDisruptionBudget',
  'HorizontalPodAutoscaler',
  'NetworkPolicy',
  'PersistentVolumeClaim',
  'Rollout',
  'AnalysisTemplate',
];

/** The name of the project that holds every component when none is configured. */
export const DEFAULT_PROJECT_NAME = 'default';

/**
 * Without `fleet.projects`, one project holds every component: the deploy namespace, Secrets
 * and ConfigMaps named after the application (`<application name>-*`), no Ingress host, every
 * cluster, pods of its manifests at the `baseline` Pod Security Standard.
 */
export function defaultProject(deployNamespace: string): FleetProject {
  return {
    name: DEFAULT_PROJECT_NAME,
    owners: [],
    namespaces: [deployNamespace],
    secrets: ['{app}-*'],
    ingressHosts: [],
    kinds: { allow: DEFAULT_PROJECT_KINDS, deny: [] },
    podSecurity: DEFAULT_POD_SECURITY_LEVEL,
    builtIn: true,
  };
}

const PROJECT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const NAMESPACE_PATTERN = /^[-a-z0-9*{}]+$/;
const SECRET_PATTERN = /^[-.a-z0-9*{}]+$/;
const HOST_PATTERN =
  /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
/** A kind (`Deployment`), or a kind with its API group (`Job.batch.volcano.sh`). */
const KIND =
  /^[A-Z][A-Za-z0-9]*(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$/;

/**
 * `sources`: absolute http(s) URL patterns (`https://github.com/acme/payments-*`). A pattern's
 * `*` matches any run of characters, `/` included; one that does not end with `*` names one
 * folder or file and what is below it.
 */
function sourcePatterns(section: Config, at: string): string[] | undefined {
  const values = section.getOptionalStringArray('sources');
  for (const value of values ?? []) {
    // As URLs compare: a lower-case scheme and host, no default port, a path after the host.
    const origin = /^(https?):\/\/([^/]*)\//.exec(value);
    if (!origin) {
      throw new Error(
        `Invalid config value ${at}.sources entry '${value}': expected an http(s) URL with a path, or a pattern of them with '*', such as https://github.com/acme/payments-*`,
      );
    }
    const host = origin[2];
    if (host.includes('*')) {
      throw new Error(
        `Invalid config value ${at}.sources entry '${value}': a '*' in the host would match any host`,
      );
    }
    let normal: string | undefined;
    try {
      normal = new URL(`${origin[0]}`).origin;
    } catch {
      normal = undefined;
    }
    if (normal !== `${origin[1]}://${host}`) {
      throw new Error(
        `Invalid config value ${at}.sources entry '${value}': write the host as URLs compare it${
          normal ? ` (${normal})` : ''
        }`,
      );
    }
  }
  return values;
}

function patterns(
  section: Config,
  key: string,
  at: string,
  shape: RegExp,
  fallback: string[],
): string[] {
  const values = section.getOptionalStringArray(key) ?? fallback;
  for (const value of values) {
    // `{app}` is the one placeholder; any other brace would never match.
    if (!shape.test(value) || /[{}]/.test(value.split('{app}').join(''))) {
      throw new Error(
        `Invalid config value ${at}.${key} entry '${value}': expected a name or a pattern with '*'`,
      );
    }
  }
  return values;
}

/**
 * Reads `fleet.projects` (the `fleet` section given): each project's name, owners, clusters,
 * namespaces, secrets, ingressHosts, kinds and podSecurity. Without it, the built-in `default` project. A
 * mistake stops the backend naming the entry: a wrong project would open or close the wrong
 * doors.
 */
export function readProjects(
  fleet: Config,
  deployNamespace: string,
): FleetProject[] {
  const sections = fleet.getOptionalConfigArray('projects');
  if (!sections || sections.length === 0)
    return [defaultProject(deployNamespace)];
  const seen = new Set<string>();
  return sections.map((section, index) => {
    const at = `fleet.projects[${index}]`;
    const name = section.getString('name');
    if (!PROJECT_NAME.test(name) || name.length > 63) {
      throw new Error(
        `Invalid config value ${at}.name '${name}': expected a DNS-1123 label`,
      );
    }
    if (seen.has(name)) {
      throw new Error(
        `Invalid config value ${at}.name: '${name}' is named twice`,
      );
    }
    seen.add(name);
    const owners = section
      .getStringArray('owners')
      .map(ref =>
        configGroupRef(ref, `${at}.owners`).toLocaleLowerCase('en-US'),
      );
    let clusters: FleetProject['clusters'];
    const clusterSection = section.getOptionalConfig('clusters');
    if (clusterSection) {
      const names = clusterSection.getOptionalStringArray('names');
      const text = clusterSection.getOptionalString('selector');
      const selector =
        text !== undefined ? parseLabelSelector(text) : undefined;
      if (text !== undefined && !selector) {
        throw new Error(
          `Invalid config value ${at}.clusters.selector '${text}': expected a label selector such as 'env in (staging, prod)'`,
        );
      }
      if (!names && text === undefined) {
        throw new Error(
          `Invalid config value ${at}.clusters: give names and/or a selector (leave clusters out for every cluster)`,
        );
      }
      clusters = { names, selector, text };
    }
    const namespaces = patterns(
      section,
      'namespaces',
      at,
      NAMESPACE_PATTERN,
      [],
    );
    if (namespaces.length === 0) {
      throw new Error(
        `Invalid config value ${at}.namespaces: a project needs at least one namespace`,
      );
    }
    const kinds = section.getOptionalConfig('kinds');
    const kindList = (key: 'allow' | 'deny') => {
      const list = kinds?.getOptionalStringArray(key) ?? [];
      for (const kind of list) {
        if (!KIND.test(kind))
          throw new Error(
            `Invalid config value ${at}.kinds.${key} entry '${kind}': expected a kind such as Deployment, or a kind with its API group such as Job.batch.volcano.sh`,
          );
      }
      return list;
    };
    const allow = kindList('allow');
    const podSecurity =
      section.getOptionalString('podSecurity') ?? DEFAULT_POD_SECURITY_LEVEL;
    if (!POD_SECURITY_LEVELS.includes(podSecurity as PodSecurityLevel)) {
      throw new Error(
        `Invalid config value ${at}.podSecurity '${podSecurity}': expected one of ${POD_SECURITY_LEVELS.join(
          ', ',
        )}`,
      );
    }
    return {
      name,
      owners,
      clusters,
      namespaces,
      secrets: patterns(section, 'secrets', at, SECRET_PATTERN, ['{app}-*']),
      ingressHosts: patterns(section, 'ingressHosts', at, HOST_PATTERN, []),
      sources: sourcePatterns(section, at),
      kinds: {
        allow: allow.length > 0 ? allow : DEFAULT_PROJECT_KINDS,
        deny: kindList('deny'),
      },
      podSecurity: podSecurity as PodSecurityLevel,
    };
  });
}
