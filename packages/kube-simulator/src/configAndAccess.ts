/**
 * ConfigMaps, ServiceAccounts and PersistentVolumeClaims (core v1), Roles, RoleBindings,
 * ClusterRoles and ClusterRoleBindings (rbac.authorization.k8s.io/v1) and NetworkPolicies
 * (networking.k8s.io/v1), with the API server's defaults and rules for them: ConfigMap keys are
 * `[-._a-zA-Z0-9]+`, a key is in `data` or `binaryData` but not both, an `immutable` ConfigMap
 * keeps its data; a claim needs access modes and a storage request and its spec is immutable
 * but for the requests; a policy rule names verbs and either resources (with API groups) or, in a
 * ClusterRole, non-resource URLs; a binding's `roleRef` is required and cannot change, and its
 * subjects are ServiceAccounts (with a namespace in a ClusterRoleBinding), Users or Groups; a
 * NetworkPolicy's `policyTypes` default from its rules. A claim is `Pending` until
 * `readyDelayMs` after its creation, then `Bound` with the capacity it requested, as a
 * dynamically provisioned claim on a real cluster.
 */
import { configKeyProblems } from '@cnp/plugin-fleet-common';
import { cause, StatusCause } from './errors';
import { checkFormat } from './metaValidation';
import { validateNetworkPolicy } from './networkPolicyValidation';
import type { ResourceDef } from './resourceDef';
import {
  asArray,
  asObject,
  deepEqual,
  ensureObject,
  isPlainObject,
  JsonObject,
} from './util';

const core = {
  group: '',
  version: 'v1',
  categories: [] as string[],
  builtin: true,
  allowCreateOnUpdate: false,
  nameFormat: 'dns1123-subdomain' as const,
};

const rbac = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  shortNames: [] as string[],
  categories: [] as string[],
  builtin: true,
  hasGeneration: false,
  allowCreateOnUpdate: true,
  nameFormat: 'path-segment' as const,
  noStatus: true,
};

export const CONFIG_AND_ACCESS_RESOURCES: ResourceDef[] = [
  {
    ...core,
    plural: 'configmaps',
    singular: 'configmap',
    kind: 'ConfigMap',
    namespaced: true,
    shortNames: ['cm'],
    hasGeneration: false,
    noStatus: true,
  },
  {
    ...core,
    plural: 'serviceaccounts',
    singular: 'serviceaccount',
    kind: 'ServiceAccount',
    namespaced: true,
    shortNames: ['sa'],
    hasGeneration: false,
    noStatus: true,
  },
  {
    ...core,
    plural: 'persistentvolumeclaims',
    singular: 'persistentvolumeclaim',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    shortNames: ['pvc'],
    hasGeneration: false,
  },
  {
    ...rbac,
    plural: 'roles',
    singular: 'role',
    kind: 'Role',
    namespaced: true,
  },
  {
    ...rbac,
    plural: 'rolebindings',
    singular: 'rolebinding',
    kind: 'RoleBinding',
    namespaced: true,
  },
  {
    ...rbac,
    plural: 'clusterroles',
    singular: 'clusterrole',
    kind: 'ClusterRole',
    namespaced: false,
  },
  {
    ...rbac,
    plural: 'clusterrolebindings',
    singular: 'clusterrolebinding',
    kind: 'ClusterRoleBinding',
    namespaced: false,
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'networkpolicies',
    singular: 'networkpolicy',
    kind: 'NetworkPolicy',
    namespaced: true,
    shortNames: ['netpol'],
    categories: [],
    builtin: true,
    hasGeneration: true,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain',
    noStatus: true,
  },
];

const RBAC_GROUP = 'rbac.authorization.k8s.io';
/** The API server's limit on a ConfigMap's data (1 MiB). */
const MAX_CONFIG_MAP_BYTES = 1024 * 1024;
const BASE64 =
  /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const ACCESS_MODES = [
  'ReadOnlyMany',
  'ReadWriteMany',
  'ReadWriteOnce',
  'ReadWriteOncePod',
];

/** What decoding a ConfigMap body finds wrong: `binaryData` is []byte, sent as base64. */
export function configMapDecodeProblem(
  def: ResourceDef,
  obj: JsonObject,
): string | undefined {
  if (def.kind !== 'ConfigMap') return undefined;
  for (const [key, value] of Object.entries(asObject(obj.binaryData) ?? {})) {
    if (typeof value === 'string' && !BASE64.test(value))
      return `illegal base64 data in ConfigMap.binaryData["${key}"]`;
  }
  return undefined;
}

/** The defaults of these kinds (claims' volume mode, policies' types and port protocols). */
export function defaultConfigOrAccess(def: ResourceDef, obj: JsonObject): void {
  switch (def.kind) {
    case 'PersistentVolumeClaim': {
      const spec = ensureObject(obj, 'spec');
      if (spec.volumeMode === undefined) spec.volumeMode = 'Filesystem';
      break;
    }
    case 'RoleBinding':
    case 'ClusterRoleBinding': {
      const roleRef = asObject(obj.roleRef);
      if (roleRef && !roleRef.apiGroup) roleRef.apiGroup = RBAC_GROUP;
      for (const raw of asArray(obj.subjects)) {
        const subject = asObject(raw);
        if (!subject || subject.apiGroup) continue;
        if (subject.kind === 'User' || subject.kind === 'Group')
          subject.apiGroup = RBAC_GROUP;
      }
      break;
    }
    case 'NetworkPolicy': {
      const spec = ensureObject(obj, 'spec');
      if (!isPlainObject(spec.podSelector)) spec.podSelector = {};
      if (asArray(spec.policyTypes).length === 0) {
        spec.policyTypes = asArray(spec.egress).length
          ? ['Ingress', 'Egress']
          : ['Ingress'];
      }
      for (const direction of ['ingress', 'egress'])
        for (const rule of asArray(spec[direction]))
          for (const port of asArray(asObject(rule)?.ports))
            if (isPlainObject(port) && port.protocol === undefined)
              port.protocol = 'TCP';
      break;
    }
    default:
      break;
  }
}

function validateConfigMap(
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const out: StatusCause[] = [];
  const data = asObject(obj.data) ?? {};
  const binary = asObject(obj.binaryData) ?? {};
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const problem of configKeyProblems(key))
      out.push(cause.invalid('data', key, problem));
    size += key.length + String(value).length;
  }
  for (const [key, value] of Object.entries(binary)) {
    for (const problem of configKeyProblems(key))
      out.push(cause.invalid('binaryData', key, problem));
    if (key in data)
      out.push(
        cause.invalid(
          `data[${key}]`,
          key,
          'duplicate of key present in binaryData',
        ),
      );
    size += key.length + Buffer.from(String(value), 'base64').length;
  }
  if (size > MAX_CONFIG_MAP_BYTES)
    out.push({
      reason: 'FieldValueTooLong',
      field: '',
      message: `Too long: must have at most ${MAX_CONFIG_MAP_BYTES} bytes`,
    });
  if (old?.immutable === true) {
    if (
      !deepEqual(obj.data ?? {}, old.data ?? {}) ||
      !deepEqual(obj.binaryData ?? {}, old.binaryData ?? {})
    )
      out.push(
        cause.forbidden('data', 'field is immutable when `immutable` is set'),
      );
    if (obj.immutable !== true)
      out.push(
        cause.forbidden(
          'immutable',
          'field is immutable when `immutable` is set',
        ),
      );
  }
  return out;
}

function validateClaim(
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = asObject(obj.spec) ?? {};
  const modes = asArray(spec.accessModes);
  if (modes.length === 0)
    out.push(
      cause.required('spec.accessModes', 'at least 1 access mode is required'),
    );
  for (const mode of modes)
    if (!ACCESS_MODES.includes(String(mode)))
      out.push(cause.notSupported('spec.accessModes', mode, ACCESS_MODES));
  const storage = asObject(asObject(spec.resources)?.requests)?.storage;
  if (storage === undefined)
    out.push(cause.required('spec.resources[storage]'));
  else if (/^(0+(\.0*)?|-.*)([a-zA-Z]+)?$/.test(String(storage)))
    out.push(
      cause.invalid(
        'spec.resources[storage]',
        storage,
        'must be greater than zero',
      ),
    );
  if (
    spec.volumeMode !== undefined &&
    !['Block', 'Filesystem'].includes(String(spec.volumeMode))
  )
    out.push(
      cause.notSupported('spec.volumeMode', spec.volumeMode, [
        'Block',
        'Filesystem',
      ]),
    );
  if (old) {
    const strip = (s: unknown) => {
      const copy = { ...(asObject(s) ?? {}) };
      const resources = { ...(asObject(copy.resources) ?? {}) };
      delete resources.requests;
      copy.resources = resources;
      delete copy.volumeAttributesClassName;
      return copy;
    };
    if (!deepEqual(strip(old.spec), strip(obj.spec)))
      out.push(
        cause.forbidden(
          'spec',
          'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
        ),
      );
  }
  return out;
}

/** ValidatePolicyRule: verbs, and resources with API groups or (cluster-wide) URLs. */
function validateRules(obj: JsonObject, namespaced: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  asArray(obj.rules).forEach((raw, i) => {
    const rule = asObject(raw) ?? {};
    const f = `rules[${i}]`;
    if (asArray(rule.verbs).length === 0)
      out.push(
        cause.required(`${f}.verbs`, 'verbs must contain at least one value'),
      );
    const urls = asArray(rule.nonResourceURLs);
    if (urls.length) {
      if (namespaced)
        out.push(
          cause.invalid(
            `${f}.nonResourceURLs`,
            urls,
            'namespaced rules cannot apply to non-resource URLs',
          ),
        );
      if (
        asArray(rule.apiGroups).length ||
        asArray(rule.resources).length ||
        asArray(rule.resourceNames).length
      )
        out.push(
          cause.invalid(
            `${f}.nonResourceURLs`,
            urls,
            'rules cannot apply to both regular resources and non-resource URLs',
          ),
        );
      return;
    }
    if (asArray(rule.apiGroups).length === 0)
      out.push(
        cause.required(
          `${f}.apiGroups`,
          'resource rules must supply at least one api group',
        ),
      );
    if (asArray(rule.resources).length === 0)
      out.push(
        cause.required(
          `${f}.resources`,
          'resource rules must supply at least one resource',
        ),
      );
  });
  return out;
}

function validateBinding(
  def: ResourceDef,
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const out: StatusCause[] = [];
  const roleRef = asObject(obj.roleRef) ?? {};
  if (roleRef.apiGroup !== RBAC_GROUP)
    out.push(
      cause.notSupported('roleRef.apiGroup', roleRef.apiGroup ?? '', [
        RBAC_GROUP,
      ]),
    );
  const kinds = def.namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(String(roleRef.kind)))
    out.push(cause.notSupported('roleRef.kind', roleRef.kind ?? '', kinds));
  if (typeof roleRef.name !== 'string' || roleRef.name === '')
    out.push(cause.required('roleRef.name'));
  else out.push(...checkFormat('roleRef.name', roleRef.name, 'path-segment'));
  asArray(obj.subjects).forEach((raw, i) => {
    const subject = asObject(raw) ?? {};
    const f = `subjects[${i}]`;
    const name = typeof subject.name === 'string' ? subject.name : '';
    if (!name) out.push(cause.required(`${f}.name`));
    switch (subject.kind) {
      case 'ServiceAccount':
        if (name)
          out.push(...checkFormat(`${f}.name`, name, 'dns1123-subdomain'));
        if (subject.apiGroup)
          out.push(cause.notSupported(`${f}.apiGroup`, subject.apiGroup, ['']));
        if (!def.namespaced && !subject.namespace)
          out.push(cause.required(`${f}.namespace`));
        break;
      case 'User':
      case 'Group':
        if (subject.apiGroup !== RBAC_GROUP)
          out.push(
            cause.notSupported(`${f}.apiGroup`, subject.apiGroup ?? '', [
              RBAC_GROUP,
            ]),
          );
        break;
      default:
        out.push(
          cause.notSupported(`${f}.kind`, subject.kind ?? '', [
            'ServiceAccount',
            'User',
            'Group',
          ]),
        );
    }
  });
  if (old && !deepEqual(old.roleRef, obj.roleRef))
    out.push(cause.invalid('roleRef', obj.roleRef, 'cannot change roleRef'));
  return out;
}

/** Kind-specific validation of these kinds (`old` on an update). */
export function validateConfigOrAccess(
  def: ResourceDef,
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  switch (def.kind) {
    case 'ConfigMap':
      return validateConfigMap(obj, old);
    case 'PersistentVolumeClaim':
      return validateClaim(obj, old);
    case 'Role':
    case 'ClusterRole':
      return validateRules(obj, def.namespaced);
    case 'RoleBinding':
    case 'ClusterRoleBinding':
      return validateBinding(def, obj, old);
    case 'NetworkPolicy':
      return validateNetworkPolicy(obj);
    default:
      return [];
  }
}

/** The status a claim starts with: `Pending` until it is bound. */
export function initialClaimStatus(def: ResourceDef, obj: JsonObject): boolean {
  if (def.kind !== 'PersistentVolumeClaim') return false;
  obj.status = { phase: 'Pending' };
  return true;
}

/**
 * A claim's status: `Bound` once `due` (`readyDelayMs` after its creation), with its access
 * modes and the storage it requested as capacity, and for good; `Pending` before.
 */
export function claimStatus(claim: JsonObject, due: boolean): JsonObject {
  const status = asObject(claim.status) ?? {};
  if (status.phase === 'Bound') return status;
  if (!due) return { phase: 'Pending' };
  const spec = asObject(claim.spec) ?? {};
  const storage = asObject(asObject(spec.resources)?.requests)?.storage;
  return {
    phase: 'Bound',
    accessModes: asArray(spec.accessModes),
    capacity: storage === undefined ? {} : { storage },
  };
}
