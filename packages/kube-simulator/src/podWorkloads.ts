/**
 * StatefulSets and DaemonSets (apps/v1), Jobs and CronJobs (batch/v1) as the API server takes
 * them: the defaults of their specs and pod templates (a Job's generated selector and
 * `controller-uid` / `job-name` labels included), and their rules: a selector that matches the
 * template, a pod template with `restartPolicy: Always` (OnFailure or Never for a Job), a
 * StatefulSet spec whose fields but replicas, template, updateStrategy, minReadySeconds,
 * ordinals and the PVC retention policy cannot change, a Job whose template and selector cannot
 * change, and a CronJob with a five-field schedule. Their controllers are in
 * podWorkloadStatus.ts.
 */
import { cause, StatusCause } from './errors';
import { validateLabels } from './metaValidation';
import { defaultPodTemplate, setIfMissing } from './podTemplateDefaults';
import type { ResourceDef } from './resourceDef';
import { matches, requirementsOf } from './selectors';
import {
  asArray,
  asObject,
  clone,
  deepEqual,
  ensureObject,
  isPlainObject,
  JsonObject,
} from './util';
import { validateContainers } from './validation';

const builtin = {
  version: 'v1',
  namespaced: true,
  builtin: true,
  hasGeneration: true,
  allowCreateOnUpdate: false,
  nameFormat: 'dns1123-subdomain' as const,
};

export const POD_WORKLOAD_RESOURCES: ResourceDef[] = [
  {
    ...builtin,
    group: 'apps',
    plural: 'statefulsets',
    singular: 'statefulset',
    kind: 'StatefulSet',
    shortNames: ['sts'],
    categories: ['all'],
  },
  {
    ...builtin,
    group: 'apps',
    plural: 'daemonsets',
    singular: 'daemonset',
    kind: 'DaemonSet',
    shortNames: ['ds'],
    categories: ['all'],
  },
  {
    ...builtin,
    group: 'batch',
    plural: 'jobs',
    singular: 'job',
    kind: 'Job',
    shortNames: [],
    categories: ['all'],
  },
  {
    ...builtin,
    group: 'batch',
    plural: 'cronjobs',
    singular: 'cronjob',
    kind: 'CronJob',
    shortNames: ['cj'],
    categories: ['all'],
    // The CronJob controller appends 11 characters to the Job names it makes.
    maxNameLength: 52,
  },
];

/** The labels a Job's pods get from the API server (and its generated selector). */
export const JOB_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';

function defaultStatefulSet(obj: JsonObject) {
  const spec = ensureObject(obj, 'spec');
  setIfMissing(spec, 'replicas', 1);
  setIfMissing(spec, 'podManagementPolicy', 'OrderedReady');
  const strategy = ensureObject(spec, 'updateStrategy');
  setIfMissing(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate')
    setIfMissing(ensureObject(strategy, 'rollingUpdate'), 'partition', 0);
  setIfMissing(spec, 'revisionHistoryLimit', 10);
  const retention = ensureObject(spec, 'persistentVolumeClaimRetentionPolicy');
  setIfMissing(retention, 'whenDeleted', 'Retain');
  setIfMissing(retention, 'whenScaled', 'Retain');
  for (const raw of asArray(spec.volumeClaimTemplates)) {
    if (!isPlainObject(raw)) continue;
    setIfMissing(raw, 'apiVersion', 'v1');
    setIfMissing(raw, 'kind', 'PersistentVolumeClaim');
    const meta = ensureObject(raw, 'metadata');
    if (!('creationTimestamp' in meta)) meta.creationTimestamp = null;
    setIfMissing(ensureObject(raw, 'spec'), 'volumeMode', 'Filesystem');
    setIfMissing(raw, 'status', { phase: 'Pending' });
  }
  defaultPodTemplate(ensureObject(spec, 'template'));
}

function defaultDaemonSet(obj: JsonObject) {
  const spec = ensureObject(obj, 'spec');
  const strategy = ensureObject(spec, 'updateStrategy');
  setIfMissing(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const ru = ensureObject(strategy, 'rollingUpdate');
    setIfMissing(ru, 'maxUnavailable', 1);
    setIfMissing(ru, 'maxSurge', 0);
  }
  setIfMissing(spec, 'revisionHistoryLimit', 10);
  defaultPodTemplate(ensureObject(spec, 'template'));
}

/** SetDefaults_JobSpec and the pod template's defaults (also a CronJob's job template). */
function defaultJobSpec(spec: JsonObject) {
  defaultPodTemplate(ensureObject(spec, 'template'));
}

/**
 * SetDefaults_Job, then what the Job strategy does on create: unless `manualSelector`, the
 * selector is generated from the uid and the template gets the labels it selects.
 */
function defaultJob(obj: JsonObject) {
  const meta = ensureObject(obj, 'metadata');
  const spec = ensureObject(obj, 'spec');
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  setIfMissing(spec, 'parallelism', 1);
  setIfMissing(spec, 'backoffLimit', 6);
  setIfMissing(spec, 'completionMode', 'NonIndexed');
  setIfMissing(spec, 'suspend', false);
  if (spec.podFailurePolicy === undefined)
    setIfMissing(spec, 'podReplacementPolicy', 'TerminatingOrFailed');
  const template = ensureObject(spec, 'template');
  const templateMeta = ensureObject(template, 'metadata');
  const userLabels = asObject(templateMeta.labels);
  if (userLabels && Object.keys(asObject(meta.labels) ?? {}).length === 0)
    meta.labels = clone(userLabels);
  if (
    spec.manualSelector !== true &&
    spec.selector === undefined &&
    typeof meta.uid === 'string'
  ) {
    const uid = meta.uid;
    const name = String(meta.name ?? '');
    spec.selector = { matchLabels: { [JOB_UID_LABEL]: uid } };
    templateMeta.labels = {
      ...(userLabels ?? {}),
      [JOB_UID_LABEL]: uid,
      [JOB_NAME_LABEL]: name,
      'controller-uid': uid,
      'job-name': name,
    };
  }
  defaultJobSpec(spec);
}

function defaultCronJob(obj: JsonObject) {
  const spec = ensureObject(obj, 'spec');
  setIfMissing(spec, 'concurrencyPolicy', 'Allow');
  setIfMissing(spec, 'suspend', false);
  setIfMissing(spec, 'successfulJobsHistoryLimit', 3);
  setIfMissing(spec, 'failedJobsHistoryLimit', 1);
  const jobTemplate = ensureObject(spec, 'jobTemplate');
  defaultJobSpec(ensureObject(jobTemplate, 'spec'));
}

/** The defaults of these kinds; other kinds are left alone. */
export function defaultPodWorkload(def: ResourceDef, obj: JsonObject): void {
  switch (def.kind) {
    case 'StatefulSet':
      defaultStatefulSet(obj);
      break;
    case 'DaemonSet':
      defaultDaemonSet(obj);
      break;
    case 'Job':
      defaultJob(obj);
      break;
    case 'CronJob':
      defaultCronJob(obj);
      break;
    default:
      break;
  }
}

function nonNegative(spec: JsonObject, field: string, base = 'spec') {
  const value = spec[field];
  return typeof value === 'number' && value < 0
    ? [
        cause.invalid(
          `${base}.${field}`,
          value,
          'must be greater than or equal to 0',
        ),
      ]
    : [];
}

/** A pod template: labels, containers, and the restart policies the kind allows. */
function validateTemplate(
  template: unknown,
  base: string,
  restartPolicies: string[],
): StatusCause[] {
  const t = asObject(template) ?? {};
  const out = validateLabels(
    `${base}.metadata.labels`,
    asObject(t.metadata)?.labels,
  );
  const podSpec = asObject(t.spec);
  if (!podSpec) return [...out, cause.required(`${base}.spec.containers`)];
  out.push(...validateContainers(podSpec, `${base}.spec`));
  // Defaulting has set it (`Always` when the template has none).
  const policy = podSpec.restartPolicy;
  if (!restartPolicies.includes(String(policy)))
    out.push(
      cause.notSupported(`${base}.spec.restartPolicy`, policy, restartPolicies),
    );
  return out;
}

/** A selector that is required, not empty, and matches the template's labels. */
function validateSelector(spec: JsonObject, kind: string): StatusCause[] {
  const selector = spec.selector;
  const labels = asObject(asObject(asObject(spec.template)?.metadata)?.labels);
  if (!isPlainObject(selector)) return [cause.required('spec.selector')];
  if (requirementsOf(selector).length === 0)
    return [
      cause.invalid(
        'spec.selector',
        selector,
        `empty selector is invalid for ${kind}`,
      ),
    ];
  if (!matches(requirementsOf(selector), labels as Record<string, string>))
    return [
      cause.invalid(
        'spec.template.metadata.labels',
        labels ?? {},
        '`selector` does not match template `labels`',
      ),
    ];
  return [];
}

/** The fields of a StatefulSet's spec an update may change. */
const STATEFUL_SET_MUTABLE = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
];

function validateStatefulSet(
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const spec = asObject(obj.spec) ?? {};
  const out = [
    ...nonNegative(spec, 'replicas'),
    ...validateSelector(spec, 'statefulset'),
    ...validateTemplate(spec.template, 'spec.template', ['Always']),
  ];
  const policies = ['OrderedReady', 'Parallel'];
  if (!policies.includes(String(spec.podManagementPolicy)))
    out.push(
      cause.notSupported(
        'spec.podManagementPolicy',
        spec.podManagementPolicy,
        policies,
      ),
    );
  const strategy = asObject(spec.updateStrategy) ?? {};
  const strategies = ['OnDelete', 'RollingUpdate'];
  if (!strategies.includes(String(strategy.type)))
    out.push(
      cause.notSupported('spec.updateStrategy.type', strategy.type, strategies),
    );
  if (old) {
    const rest = (s: unknown) => {
      const copy = { ...(asObject(s) ?? {}) };
      for (const field of STATEFUL_SET_MUTABLE) delete copy[field];
      return copy;
    };
    if (!deepEqual(rest(old.spec), rest(obj.spec)))
      out.push(
        cause.forbidden(
          'spec',
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
      );
  }
  return out;
}

function immutable(
  obj: JsonObject,
  old: JsonObject | undefined,
  field: string,
): StatusCause[] {
  if (!old) return [];
  const now = asObject(obj.spec)?.[field];
  return deepEqual(asObject(old.spec)?.[field], now)
    ? []
    : [cause.invalid(`spec.${field}`, now ?? null, 'field is immutable')];
}

function validateDaemonSet(
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const spec = asObject(obj.spec) ?? {};
  const out = [
    ...validateSelector(spec, 'daemonset'),
    ...validateTemplate(spec.template, 'spec.template', ['Always']),
    ...immutable(obj, old, 'selector'),
  ];
  const strategy = asObject(spec.updateStrategy) ?? {};
  const strategies = ['OnDelete', 'RollingUpdate'];
  if (!strategies.includes(String(strategy.type)))
    out.push(
      cause.notSupported('spec.updateStrategy.type', strategy.type, strategies),
    );
  return out;
}

const JOB_RESTART_POLICIES = ['OnFailure', 'Never'];

function validateJob(
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const spec = asObject(obj.spec) ?? {};
  const out = [
    ...nonNegative(spec, 'parallelism'),
    ...nonNegative(spec, 'completions'),
    ...nonNegative(spec, 'backoffLimit'),
    ...validateSelector(spec, 'job'),
    ...validateTemplate(spec.template, 'spec.template', JOB_RESTART_POLICIES),
  ];
  const meta = asObject(obj.metadata) ?? {};
  if (!old && spec.manualSelector !== true) {
    const generated = { matchLabels: { [JOB_UID_LABEL]: meta.uid } };
    if (!deepEqual(spec.selector, generated))
      out.push(
        cause.invalid(
          'spec.selector',
          spec.selector ?? null,
          '`selector` not auto-generated',
        ),
      );
  }
  out.push(
    ...immutable(obj, old, 'template'),
    ...immutable(obj, old, 'selector'),
    ...immutable(obj, old, 'completions'),
  );
  return out;
}

const CRON_MACROS = [
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
];

/** What robfig/cron's standard parser (the CronJob controller's) says of a schedule. */
function scheduleProblem(schedule: string): string | undefined {
  if (/^\s*(CRON_)?TZ=/.test(schedule))
    return 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead';
  if (schedule.startsWith('@')) {
    if (CRON_MACROS.includes(schedule) || /^@every \S+$/.test(schedule))
      return undefined;
    return `unrecognized descriptor: ${schedule}`;
  }
  const fields = schedule.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5)
    return `expected exactly 5 fields, found ${fields.length}: ${schedule}`;
  const field = /^(\*|\?|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(\/\d+)?$/;
  const bad = fields.find(f => !f.split(',').every(part => field.test(part)));
  return bad === undefined ? undefined : `failed to parse: ${bad}`;
}

function validateCronJob(obj: JsonObject): StatusCause[] {
  const spec = asObject(obj.spec) ?? {};
  const out: StatusCause[] = [];
  if (typeof spec.schedule !== 'string' || spec.schedule === '')
    out.push(cause.required('spec.schedule'));
  else {
    const problem = scheduleProblem(spec.schedule);
    if (problem)
      out.push(cause.invalid('spec.schedule', spec.schedule, problem));
  }
  const policies = ['Allow', 'Forbid', 'Replace'];
  if (!policies.includes(String(spec.concurrencyPolicy)))
    out.push(
      cause.notSupported(
        'spec.concurrencyPolicy',
        spec.concurrencyPolicy,
        policies,
      ),
    );
  const jobSpec = asObject(asObject(spec.jobTemplate)?.spec) ?? {};
  out.push(
    ...validateTemplate(
      jobSpec.template,
      'spec.jobTemplate.spec.template',
      JOB_RESTART_POLICIES,
    ),
  );
  return out;
}

/** Kind-specific validation of these kinds (`old` on an update). */
export function validatePodWorkload(
  def: ResourceDef,
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  switch (def.kind) {
    case 'StatefulSet':
      return validateStatefulSet(obj, old);
    case 'DaemonSet':
      return validateDaemonSet(obj, old);
    case 'Job':
      return validateJob(obj, old);
    case 'CronJob':
      return validateCronJob(obj);
    default:
      return [];
  }
}
