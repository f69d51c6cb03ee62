/*
 * The Kubernetes Pod Security Standards, checked on the pod templates of a component's own
 * manifests before Fleet applies them with its own credentials. The controls, their fields and
 * their allowed values are those of the official page "Pod Security Standards"
 * (https://kubernetes.io/docs/concepts/security/pod-security-standards/, source
 * kubernetes/website content/en/docs/concepts/security/pod-security-standards.md), as of
 * Kubernetes 1.34: the Baseline table, and the Restricted table on top of it.
 */

/**
 * How far a project holds the pods of its components' manifests: `privileged` (no rule),
 * `baseline` (no known privilege escalation: no host namespaces, privileged containers, added
 * capabilities beyond the default set, hostPath volumes, host ports...) or `restricted`
 * (baseline, and non-root, no privilege escalation, a seccomp profile, every capability dropped,
 * only core volume types).
 */
export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

/** The levels, from the most open to the most closed. */
export const POD_SECURITY_LEVELS: readonly PodSecurityLevel[] = [
  'privileged',
  'baseline',
  'restricted',
];

/** The level of a project that names none. */
export const DEFAULT_POD_SECURITY_LEVEL: PodSecurityLevel = 'baseline';

/** A rule of the standard a pod template breaks. */
export interface PodSecurityProblem {
  /**
   * The container that breaks it, as `container 'app'`, `init container 'setup'` or
   * `ephemeral container 'debug'`; undefined for a rule of the pod itself.
   */
  container?: string;
  /**
   * The rule, in words that end with "not allowed" or "required", so that a caller may add who
   * holds to it (`privileged containers are not allowed`).
   */
  rule: string;
}

/** An object of a component's manifests, as read here: any kind, any shape. */
export interface PodTemplateHolder {
  kind?: string;
  metadata?: unknown;
  spec?: unknown;
}

type Loose = Record<string, any>;

/** A pod template: its metadata (for annotations) and its spec. */
export interface PodTemplate {
  metadata: Loose;
  spec: Loose;
}

function isObject(value: unknown): value is Loose {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function list(value: unknown): Loose[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** How deep into an object pod templates are looked for (a manifest nests a few levels). */
const MAX_TEMPLATE_DEPTH = 32;

/** Whether a value is a pod spec: it lists containers (or init or ephemeral ones). */
function isPodSpec(value: unknown): value is Loose {
  return (
    isObject(value) &&
    (Array.isArray(value.containers) ||
      Array.isArray(value.initContainers) ||
      Array.isArray(value.ephemeralContainers))
  );
}

/**
 * The pod templates of an object: where the built-in kinds keep them (a Pod's own metadata and
 * spec, `spec.template` of a Deployment, StatefulSet, DaemonSet, ReplicaSet,
 * ReplicationController, Job or Argo Rollout, a CronJob's `spec.jobTemplate.spec.template`, a
 * PodTemplate's `template`), and any other object within it whose `spec` lists containers,
 * however deep: the pods a custom kind makes are checked as well as the built-in ones (an Argo
 * AnalysisTemplate's `spec.metrics[].provider.job.spec.template`, a batch scheduler's
 * `spec.tasks[].template`), whatever its controller.
 */
export function podTemplatesOf(object: PodTemplateHolder): PodTemplate[] {
  const spec = isObject(object.spec) ? object.spec : undefined;
  const known: unknown[] = [
    spec?.template,
    spec?.jobTemplate?.spec?.template,
    (object as { template?: unknown }).template,
    object.kind === 'Pod'
      ? { metadata: object.metadata, spec: object.spec }
      : undefined,
  ];
  const templates: PodTemplate[] = [];
  // One template per metadata and spec: two templates may share a spec (a YAML alias) and still
  // differ in their metadata's annotations.
  const seen = new Map<unknown, Set<unknown>>();
  const add = (holder: Loose) => {
    const metadatas = seen.get(holder.spec) ?? new Set<unknown>();
    if (metadatas.has(holder.metadata)) return;
    metadatas.add(holder.metadata);
    seen.set(holder.spec, metadatas);
    templates.push({
      metadata: isObject(holder.metadata) ? holder.metadata : {},
      spec: holder.spec,
    });
  };
  for (const holder of known) {
    if (isObject(holder) && isObject(holder.spec)) add(holder);
  }
  const stack: Array<{ value: unknown; depth: number }> = [
    { value: object, depth: 0 },
  ];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (depth > MAX_TEMPLATE_DEPTH) continue;
    let children: unknown[] = [];
    if (Array.isArray(value)) children = value;
    else if (isObject(value)) {
      if (isPodSpec(value.spec)) add(value);
      children = Object.values(value);
    }
    for (const child of children) {
      if (child && typeof child === 'object') {
        stack.push({ value: child, depth: depth + 1 });
      }
    }
  }
  return templates;
}

/** Unset, in the standard's words "Undefined/nil". */
function unset(value: unknown): boolean {
  return value === undefined || value === null;
}

/** Capabilities Baseline lets a container add (Docker's default set). */
const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

/** The one capability Restricted lets a container add back. */
const RESTRICTED_CAPABILITIES = new Set(['NET_BIND_SERVICE']);

/** The sysctls Baseline calls safe: namespaced, and isolated from other pods of the node. */
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);

/** SELinux types Baseline allows besides none. */
const SELINUX_TYPES = new Set([
  'container_t',
  'container_init_t',
  'container_kvm_t',
  'container_engine_t',
]);

/** AppArmor profile types (field) Baseline allows besides none. */
const APPARMOR_TYPES = new Set(['RuntimeDefault', 'Localhost']);

/** Seccomp profile types Baseline allows besides none, and one of which Restricted requires. */
const SECCOMP_TYPES = new Set(['RuntimeDefault', 'Localhost']);

/** Volume sources Restricted allows: the core ones and those defined through PersistentVolumes. */
const RESTRICTED_VOLUME_SOURCES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);

const APPARMOR_ANNOTATION_PREFIX =
  'container.apparmor.security.beta.kubernetes.io/';

/** The probes and lifecycle hooks whose `host` Baseline forbids. */
const HOST_FIELDS: Array<[string, string]> = [
  ['livenessProbe', 'httpGet'],
  ['readinessProbe', 'httpGet'],
  ['startupProbe', 'httpGet'],
  ['livenessProbe', 'tcpSocket'],
  ['readinessProbe', 'tcpSocket'],
  ['startupProbe', 'tcpSocket'],
  ['lifecycle.postStart', 'tcpSocket'],
  ['lifecycle.preStop', 'tcpSocket'],
  ['lifecycle.postStart', 'httpGet'],
  ['lifecycle.preStop', 'httpGet'],
];

interface Container {
  /** `container 'app'`, as a problem names it. */
  label: string;
  value: Loose;
}

function containersOf(spec: Loose): Container[] {
  const named = (what: string, items: Loose[]) =>
    items.map(value => ({
      label: `${what} '${String(value.name ?? '')}'`,
      value,
    }));
  return [
    ...named('container', list(spec.containers)),
    ...named('init container', list(spec.initContainers)),
    ...named('ephemeral container', list(spec.ephemeralContainers)),
  ];
}

/** The rules both of a pod's and of a container's security context hold to under Baseline. */
function baselineContextRule(context: Loose): string | undefined {
  if (
    !unset(context.windowsOptions?.hostProcess) &&
    context.windowsOptions.hostProcess !== false
  ) {
    return 'HostProcess containers (securityContext.windowsOptions.hostProcess) are not allowed';
  }
  const appArmor = context.appArmorProfile?.type;
  if (!unset(appArmor) && !APPARMOR_TYPES.has(appArmor)) {
    return `AppArmor profile ${String(
      appArmor,
    )} (securityContext.appArmorProfile.type) is not allowed`;
  }
  const seLinux = isObject(context.seLinuxOptions)
    ? context.seLinuxOptions
    : {};
  if (
    !unset(seLinux.type) &&
    seLinux.type !== '' &&
    !SELINUX_TYPES.has(seLinux.type)
  ) {
    return `SELinux type '${String(
      seLinux.type,
    )}' (securityContext.seLinuxOptions.type) is not allowed`;
  }
  for (const field of ['user', 'role']) {
    if (!unset(seLinux[field]) && seLinux[field] !== '') {
      return `a custom SELinux ${field} (securityContext.seLinuxOptions.${field}) is not allowed`;
    }
  }
  const seccomp = context.seccompProfile?.type;
  if (!unset(seccomp) && !SECCOMP_TYPES.has(seccomp)) {
    return `seccomp profile ${String(
      seccomp,
    )} (securityContext.seccompProfile.type) is not allowed`;
  }
  return undefined;
}

function baselinePodRule(template: PodTemplate): string | undefined {
  const { spec, metadata } = template;
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC']) {
    if (!unset(spec[field]) && spec[field] !== false) {
      return `sharing the host's namespaces (${field}) is not allowed`;
    }
  }
  const context = isObject(spec.securityContext) ? spec.securityContext : {};
  const contextRule = baselineContextRule(context);
  if (contextRule) return contextRule;
  for (const sysctl of list(context.sysctls)) {
    if (!SAFE_SYSCTLS.has(sysctl.name)) {
      return `sysctl '${String(
        sysctl.name,
      )}' (securityContext.sysctls), outside the safe set, is not allowed`;
    }
  }
  for (const volume of list(spec.volumes)) {
    if (!unset(volume.hostPath)) {
      return `hostPath volume '${String(volume.name ?? '')}' is not allowed`;
    }
  }
  const annotations = isObject(metadata.annotations)
    ? metadata.annotations
    : {};
  for (const [key, value] of Object.entries(annotations)) {
    if (!key.startsWith(APPARMOR_ANNOTATION_PREFIX) || unset(value)) continue;
    if (
      value !== 'runtime/default' &&
      !String(value).startsWith('localhost/')
    ) {
      return `AppArmor profile '${String(
        value,
      )}' (annotation ${key}) is not allowed`;
    }
  }
  return undefined;
}

function baselineContainerRule(container: Loose): string | undefined {
  const context = isObject(container.securityContext)
    ? container.securityContext
    : {};
  if (!unset(context.privileged) && context.privileged !== false) {
    return 'privileged containers are not allowed';
  }
  const contextRule = baselineContextRule(context);
  if (contextRule) return contextRule;
  const added: unknown[] = Array.isArray(context.capabilities?.add)
    ? context.capabilities.add
    : [];
  for (const capability of added) {
    if (!BASELINE_CAPABILITIES.has(capability as string)) {
      return `adding capability ${String(
        capability,
      )} (securityContext.capabilities.add) is not allowed`;
    }
  }
  if (!unset(context.procMount) && context.procMount !== 'Default') {
    return `procMount ${String(
      context.procMount,
    )} (securityContext.procMount) is not allowed`;
  }
  for (const port of list(container.ports)) {
    if (!unset(port.hostPort) && port.hostPort !== 0) {
      return `host port ${String(
        port.hostPort,
      )} (ports[].hostPort) is not allowed`;
    }
  }
  for (const [at, handler] of HOST_FIELDS) {
    const owner = at
      .split('.')
      .reduce<unknown>(
        (value, key) => (isObject(value) ? value[key] : undefined),
        container,
      );
    const host =
      isObject(owner) && isObject(owner[handler])
        ? owner[handler].host
        : undefined;
    if (!unset(host) && host !== '') {
      return `a host in a probe or lifecycle hook (${at}.${handler}.host '${String(
        host,
      )}') is not allowed`;
    }
  }
  return undefined;
}

function restrictedPodRule(template: PodTemplate): string | undefined {
  const { spec } = template;
  for (const volume of list(spec.volumes)) {
    const sources = Object.keys(volume).filter(
      key => key !== 'name' && !unset(volume[key]),
    );
    const other = sources.find(
      source => !RESTRICTED_VOLUME_SOURCES.has(source),
    );
    if (other) {
      return `volume '${String(
        volume.name ?? '',
      )}' of type ${other} (only configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected and secret may be used) is not allowed`;
    }
  }
  const context = isObject(spec.securityContext) ? spec.securityContext : {};
  if (!unset(context.runAsNonRoot) && context.runAsNonRoot !== true) {
    return `securityContext.runAsNonRoot ${JSON.stringify(
      context.runAsNonRoot,
    )} on the pod is not allowed`;
  }
  return rootUserRule(context);
}

/** Restricted's "Running as Non-root user": a `runAsUser` set is a user id other than 0. */
function rootUserRule(context: Loose): string | undefined {
  const user = context.runAsUser;
  if (!unset(user) && !(typeof user === 'number' && user !== 0)) {
    return `running as user ${JSON.stringify(
      user,
    )} (securityContext.runAsUser) is not allowed`;
  }
  return undefined;
}

/** Restricted's Linux-only controls do not hold for a pod that says it runs on Windows. */
function linuxOnlyRelaxed(spec: Loose): boolean {
  return spec.os?.name === 'windows';
}

function restrictedContainerRule(
  pod: Loose,
  container: Loose,
): string | undefined {
  const podContext = isObject(pod.securityContext) ? pod.securityContext : {};
  const context = isObject(container.securityContext)
    ? container.securityContext
    : {};
  if (
    context.runAsNonRoot !== true &&
    !(unset(context.runAsNonRoot) && podContext.runAsNonRoot === true)
  ) {
    return 'securityContext.runAsNonRoot: true (on the container or the pod) is required';
  }
  const userRule = rootUserRule(context);
  if (userRule) return userRule;
  if (linuxOnlyRelaxed(pod)) return undefined;
  if (context.allowPrivilegeEscalation !== false) {
    return 'securityContext.allowPrivilegeEscalation: false is required';
  }
  // A profile set is one Baseline allows (RuntimeDefault or Localhost); unset, the pod's holds.
  if (
    unset(context.seccompProfile?.type) &&
    unset(podContext.seccompProfile?.type)
  ) {
    return 'securityContext.seccompProfile.type RuntimeDefault or Localhost (on the container or the pod) is required';
  }
  const dropped: unknown[] = Array.isArray(context.capabilities?.drop)
    ? context.capabilities.drop
    : [];
  if (!dropped.includes('ALL')) {
    return 'securityContext.capabilities.drop with ALL is required';
  }
  const added: unknown[] = Array.isArray(context.capabilities?.add)
    ? context.capabilities.add
    : [];
  for (const capability of added) {
    if (!RESTRICTED_CAPABILITIES.has(capability as string)) {
      return `adding capability ${String(
        capability,
      )} (securityContext.capabilities.add; only NET_BIND_SERVICE may be) is not allowed`;
    }
  }
  return undefined;
}

/**
 * The first rule of the Pod Security Standards at `level` that a pod template of the object
 * breaks (the pod's own rules first, then each container, init container and ephemeral
 * container in turn), or undefined when every pod template meets it, or the object has none.
 * `privileged` allows everything. A field holds only a value the standard lists (`privileged:
 * "true"`, a string, is refused like `true`).
 */
export function podSecurityProblem(
  object: PodTemplateHolder,
  level: PodSecurityLevel,
): PodSecurityProblem | undefined {
  if (level === 'privileged') return undefined;
  for (const template of podTemplatesOf(object)) {
    const podRule =
      baselinePodRule(template) ??
      (level === 'restricted' ? restrictedPodRule(template) : undefined);
    if (podRule) return { rule: podRule };
    for (const container of containersOf(template.spec)) {
      const rule =
        baselineContainerRule(container.value) ??
        (level === 'restricted'
          ? restrictedContainerRule(template.spec, container.value)
          : undefined);
      if (rule) return { container: container.label, rule };
    }
  }
  return undefined;
}
