import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { buildManifests } from '../deploy/manifests';
import {
  podSecurityProblem,
  podTemplatesOf,
  type PodSecurityLevel,
  type PodSecurityProblem,
} from './podSecurity';

type Loose = Record<string, any>;

/** A container that meets Restricted. */
const hardenedContainer = (name = 'app'): Loose => ({
  name,
  image: 'ghcr.io/acme/app:1.0.0',
  securityContext: {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
  },
});

/** A pod spec that meets Restricted: every case below changes one thing of it. */
const hardenedPod = (): Loose => ({
  securityContext: {
    runAsNonRoot: true,
    seccompProfile: { type: 'RuntimeDefault' },
  },
  containers: [hardenedContainer()],
});

const deployment = (spec: Loose, annotations?: Loose) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' }, ...(annotations && { annotations }) },
      spec,
    },
  },
});

/** The hardened pod, changed by `change`, in a Deployment. */
function changed(change: (spec: Loose, annotations: Loose) => void) {
  const spec = hardenedPod();
  const annotations: Loose = {};
  change(spec, annotations);
  return deployment(spec, annotations);
}

const app = (spec: Loose) => spec.containers[0].securityContext;
const APP = "container 'app'";

const levels: PodSecurityLevel[] = ['privileged', 'baseline', 'restricted'];
const answers = (object: object) =>
  Object.fromEntries(levels.map(l => [l, podSecurityProblem(object, l)]));

describe('podSecurityProblem', () => {
  it('lets the hardened pod through at every level', () => {
    expect(answers(changed(() => {}))).toEqual({
      privileged: undefined,
      baseline: undefined,
      restricted: undefined,
    });
  });

  // Each control of the Baseline table: refused by baseline and restricted, allowed by privileged.
  const baselineRefusals: Array<
    [string, (spec: Loose, annotations: Loose) => void, PodSecurityProblem]
  > = [
    [
      'HostProcess (pod)',
      s => {
        s.securityContext.windowsOptions = { hostProcess: true };
      },
      {
        rule: 'HostProcess containers (securityContext.windowsOptions.hostProcess) are not allowed',
      },
    ],
    [
      'HostProcess (container)',
      s => {
        app(s).windowsOptions = { hostProcess: true };
      },
      {
        container: APP,
        rule: 'HostProcess containers (securityContext.windowsOptions.hostProcess) are not allowed',
      },
    ],
    ...['hostNetwork', 'hostPID', 'hostIPC'].map(
      (field): [string, (s: Loose) => void, PodSecurityProblem] => [
        field,
        s => {
          s[field] = true;
        },
        { rule: `sharing the host's namespaces (${field}) is not allowed` },
      ],
    ),
    [
      'privileged container',
      s => {
        app(s).privileged = true;
      },
      { container: APP, rule: 'privileged containers are not allowed' },
    ],
    [
      'privileged given as a string',
      s => {
        app(s).privileged = 'true';
      },
      { container: APP, rule: 'privileged containers are not allowed' },
    ],
    [
      'privileged init container',
      s => {
        s.initContainers = [hardenedContainer('setup')];
        s.initContainers[0].securityContext.privileged = true;
      },
      {
        container: "init container 'setup'",
        rule: 'privileged containers are not allowed',
      },
    ],
    [
      'privileged ephemeral container',
      s => {
        s.ephemeralContainers = [hardenedContainer('debug')];
        s.ephemeralContainers[0].securityContext.privileged = true;
      },
      {
        container: "ephemeral container 'debug'",
        rule: 'privileged containers are not allowed',
      },
    ],
    [
      'a capability beyond the default set',
      s => {
        app(s).capabilities.add = ['NET_BIND_SERVICE', 'SYS_ADMIN'];
      },
      {
        container: APP,
        rule: 'adding capability SYS_ADMIN (securityContext.capabilities.add) is not allowed',
      },
    ],
    [
      'hostPath volume',
      s => {
        s.volumes = [{ name: 'root', hostPath: { path: '/' } }];
      },
      { rule: "hostPath volume 'root' is not allowed" },
    ],
    [
      'host port',
      s => {
        s.containers[0].ports = [{ containerPort: 80, hostPort: 80 }];
      },
      {
        container: APP,
        rule: 'host port 80 (ports[].hostPort) is not allowed',
      },
    ],
    [
      'probe host',
      s => {
        s.containers[0].readinessProbe = {
          httpGet: { host: '169.254.169.254', path: '/', port: 80 },
        };
      },
      {
        container: APP,
        rule: "a host in a probe or lifecycle hook (readinessProbe.httpGet.host '169.254.169.254') is not allowed",
      },
    ],
    [
      'lifecycle hook host',
      s => {
        s.containers[0].lifecycle = {
          preStop: { tcpSocket: { host: '10.0.0.1', port: 22 } },
        };
      },
      {
        container: APP,
        rule: "a host in a probe or lifecycle hook (lifecycle.preStop.tcpSocket.host '10.0.0.1') is not allowed",
      },
    ],
    [
      'AppArmor profile type (pod)',
      s => {
        s.securityContext.appArmorProfile = { type: 'Unconfined' };
      },
      {
        rule: 'AppArmor profile Unconfined (securityContext.appArmorProfile.type) is not allowed',
      },
    ],
    [
      'AppArmor profile type (container)',
      s => {
        app(s).appArmorProfile = { type: 'Unconfined' };
      },
      {
        container: APP,
        rule: 'AppArmor profile Unconfined (securityContext.appArmorProfile.type) is not allowed',
      },
    ],
    [
      'AppArmor annotation',
      (_, a) => {
        a['container.apparmor.security.beta.kubernetes.io/app'] = 'unconfined';
      },
      {
        rule: "AppArmor profile 'unconfined' (annotation container.apparmor.security.beta.kubernetes.io/app) is not allowed",
      },
    ],
    [
      'SELinux type',
      s => {
        app(s).seLinuxOptions = { type: 'spc_t' };
      },
      {
        container: APP,
        rule: "SELinux type 'spc_t' (securityContext.seLinuxOptions.type) is not allowed",
      },
    ],
    [
      'SELinux user',
      s => {
        s.securityContext.seLinuxOptions = { user: 'system_u' };
      },
      {
        rule: 'a custom SELinux user (securityContext.seLinuxOptions.user) is not allowed',
      },
    ],
    [
      'SELinux role',
      s => {
        app(s).seLinuxOptions = { role: 'system_r' };
      },
      {
        container: APP,
        rule: 'a custom SELinux role (securityContext.seLinuxOptions.role) is not allowed',
      },
    ],
    [
      '/proc mount type',
      s => {
        app(s).procMount = 'Unmasked';
      },
      {
        container: APP,
        rule: 'procMount Unmasked (securityContext.procMount) is not allowed',
      },
    ],
    [
      'seccomp Unconfined (pod)',
      s => {
        s.securityContext.seccompProfile = { type: 'Unconfined' };
      },
      {
        rule: 'seccomp profile Unconfined (securityContext.seccompProfile.type) is not allowed',
      },
    ],
    [
      'seccomp Unconfined (container)',
      s => {
        app(s).seccompProfile = { type: 'Unconfined' };
      },
      {
        container: APP,
        rule: 'seccomp profile Unconfined (securityContext.seccompProfile.type) is not allowed',
      },
    ],
    [
      'an unsafe sysctl',
      s => {
        s.securityContext.sysctls = [
          { name: 'net.ipv4.tcp_syncookies', value: '1' },
          { name: 'kernel.msgmax', value: '65536' },
        ];
      },
      {
        rule: "sysctl 'kernel.msgmax' (securityContext.sysctls), outside the safe set, is not allowed",
      },
    ],
  ];

  it.each(baselineRefusals)(
    'refuses %s at baseline and restricted, not at privileged',
    (_, change, problem) => {
      expect(answers(changed(change))).toEqual({
        privileged: undefined,
        baseline: problem,
        restricted: problem,
      });
    },
  );

  // The values the Baseline table allows: through at every level (on the hardened pod).
  const allowed: Array<[string, (spec: Loose, annotations: Loose) => void]> = [
    [
      'host namespaces and HostProcess set false',
      s => {
        Object.assign(s, {
          hostNetwork: false,
          hostPID: false,
          hostIPC: false,
        });
        s.securityContext.windowsOptions = { hostProcess: false };
        app(s).privileged = false;
      },
    ],
    [
      'host port 0 and probe host ""',
      s => {
        s.containers[0].ports = [{ containerPort: 8080, hostPort: 0 }];
        s.containers[0].livenessProbe = {
          tcpSocket: { host: '', port: 8080 },
        };
      },
    ],
    [
      'AppArmor RuntimeDefault, Localhost and their annotations',
      (s, a) => {
        s.securityContext.appArmorProfile = { type: 'RuntimeDefault' };
        app(s).appArmorProfile = {
          type: 'Localhost',
          localhostProfile: 'app',
        };
        a['container.apparmor.security.beta.kubernetes.io/app'] =
          'localhost/app';
        a['container.apparmor.security.beta.kubernetes.io/side'] =
          'runtime/default';
      },
    ],
    [
      'SELinux container types, an empty user and role',
      s => {
        s.securityContext.seLinuxOptions = {
          type: 'container_t',
          user: '',
          role: '',
          level: 's0:c123,c456',
        };
        app(s).seLinuxOptions = { type: 'container_engine_t' };
      },
    ],
    [
      'procMount Default and seccomp Localhost',
      s => {
        app(s).procMount = 'Default';
        app(s).seccompProfile = {
          type: 'Localhost',
          localhostProfile: 'app.json',
        };
      },
    ],
    [
      'the safe sysctls',
      s => {
        s.securityContext.sysctls = [
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
        ].map(name => ({ name, value: '1' }));
      },
    ],
    [
      'adding NET_BIND_SERVICE, and the core volume types',
      s => {
        app(s).capabilities.add = ['NET_BIND_SERVICE'];
        s.volumes = [
          { name: 'a', configMap: { name: 'c' } },
          { name: 'b', csi: { driver: 'secrets-store.csi.k8s.io' } },
          { name: 'c', downwardAPI: { items: [] } },
          { name: 'd', emptyDir: {} },
          { name: 'e', ephemeral: { volumeClaimTemplate: { spec: {} } } },
          { name: 'f', persistentVolumeClaim: { claimName: 'data' } },
          { name: 'g', projected: { sources: [] } },
          { name: 'h', secret: { secretName: 's' } },
          { name: 'i' },
        ];
      },
    ],
  ];

  it.each(allowed)('allows %s at every level', (_, change) => {
    expect(answers(changed(change))).toEqual({
      privileged: undefined,
      baseline: undefined,
      restricted: undefined,
    });
  });

  // Each control of the Restricted table: allowed by baseline, refused by restricted.
  const restrictedRefusals: Array<
    [string, (spec: Loose) => void, PodSecurityProblem]
  > = [
    [
      'a volume type outside the core ones',
      s => {
        s.volumes = [
          { name: 'cfg', configMap: { name: 'c' } },
          { name: 'share', nfs: { server: 'nfs.example.com', path: '/' } },
        ];
      },
      {
        rule: "volume 'share' of type nfs (only configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected and secret may be used) is not allowed",
      },
    ],
    [
      'privilege escalation left unset',
      s => {
        delete app(s).allowPrivilegeEscalation;
      },
      {
        container: APP,
        rule: 'securityContext.allowPrivilegeEscalation: false is required',
      },
    ],
    [
      'privilege escalation allowed',
      s => {
        app(s).allowPrivilegeEscalation = true;
      },
      {
        container: APP,
        rule: 'securityContext.allowPrivilegeEscalation: false is required',
      },
    ],
    [
      'runAsNonRoot set on neither pod nor container',
      s => {
        delete s.securityContext.runAsNonRoot;
      },
      {
        container: APP,
        rule: 'securityContext.runAsNonRoot: true (on the container or the pod) is required',
      },
    ],
    [
      'runAsNonRoot false on the container, true on the pod',
      s => {
        app(s).runAsNonRoot = false;
      },
      {
        container: APP,
        rule: 'securityContext.runAsNonRoot: true (on the container or the pod) is required',
      },
    ],
    [
      'runAsNonRoot false on the pod',
      s => {
        s.securityContext.runAsNonRoot = false;
        app(s).runAsNonRoot = true;
      },
      {
        rule: 'securityContext.runAsNonRoot false on the pod is not allowed',
      },
    ],
    [
      'runAsUser 0 on the pod',
      s => {
        s.securityContext.runAsUser = 0;
      },
      {
        rule: 'running as user 0 (securityContext.runAsUser) is not allowed',
      },
    ],
    [
      'runAsUser 0 on an init container',
      s => {
        s.initContainers = [hardenedContainer('setup')];
        s.initContainers[0].securityContext.runAsUser = 0;
      },
      {
        container: "init container 'setup'",
        rule: 'running as user 0 (securityContext.runAsUser) is not allowed',
      },
    ],
    [
      'no seccomp profile on the pod nor the container',
      s => {
        delete s.securityContext.seccompProfile;
      },
      {
        container: APP,
        rule: 'securityContext.seccompProfile.type RuntimeDefault or Localhost (on the container or the pod) is required',
      },
    ],
    [
      'capabilities not dropped',
      s => {
        app(s).capabilities = { drop: ['NET_RAW'] };
      },
      {
        container: APP,
        rule: 'securityContext.capabilities.drop with ALL is required',
      },
    ],
    [
      'an ephemeral container without the drop',
      s => {
        s.ephemeralContainers = [
          {
            ...hardenedContainer('debug'),
            securityContext: { allowPrivilegeEscalation: false },
          },
        ];
      },
      {
        container: "ephemeral container 'debug'",
        rule: 'securityContext.capabilities.drop with ALL is required',
      },
    ],
    [
      'adding a default capability other than NET_BIND_SERVICE',
      s => {
        app(s).capabilities.add = ['CHOWN'];
      },
      {
        container: APP,
        rule: 'adding capability CHOWN (securityContext.capabilities.add; only NET_BIND_SERVICE may be) is not allowed',
      },
    ],
  ];

  it.each(restrictedRefusals)(
    'refuses %s at restricted only',
    (_, change, problem) => {
      expect(answers(changed(change))).toEqual({
        privileged: undefined,
        baseline: undefined,
        restricted: problem,
      });
    },
  );

  it('takes a seccomp profile from the pod or from every container', () => {
    const perContainer = changed(s => {
      delete s.securityContext.seccompProfile;
      app(s).seccompProfile = { type: 'RuntimeDefault' };
    });
    expect(podSecurityProblem(perContainer, 'restricted')).toBeUndefined();
    const notEvery = changed(s => {
      delete s.securityContext.seccompProfile;
      app(s).seccompProfile = { type: 'RuntimeDefault' };
      s.containers.push(hardenedContainer('side'));
    });
    expect(podSecurityProblem(notEvery, 'restricted')).toEqual({
      container: "container 'side'",
      rule: 'securityContext.seccompProfile.type RuntimeDefault or Localhost (on the container or the pod) is required',
    });
  });

  it("relaxes Restricted's Linux-only controls for a Windows pod, not the others", () => {
    const windows = deployment({
      os: { name: 'windows' },
      securityContext: { runAsNonRoot: true },
      containers: [{ name: 'app', image: 'mcr.microsoft.com/app:1' }],
    });
    expect(podSecurityProblem(windows, 'restricted')).toBeUndefined();
    const root = deployment({
      os: { name: 'windows' },
      containers: [{ name: 'app', image: 'mcr.microsoft.com/app:1' }],
    });
    expect(podSecurityProblem(root, 'restricted')).toMatchObject({
      rule: 'securityContext.runAsNonRoot: true (on the container or the pod) is required',
    });
  });

  it('allows a pod that says nothing at baseline, not at restricted', () => {
    const plain = deployment({ containers: [{ name: 'app', image: 'x' }] });
    expect(answers(plain)).toEqual({
      privileged: undefined,
      baseline: undefined,
      restricted: {
        container: APP,
        rule: 'securityContext.runAsNonRoot: true (on the container or the pod) is required',
      },
    });
  });

  it('lets privileged through with every control broken at once', () => {
    const everything = changed((s, a) => {
      Object.assign(s, { hostNetwork: true, hostPID: true, hostIPC: true });
      s.volumes = [{ name: 'root', hostPath: { path: '/' } }];
      s.securityContext = { runAsUser: 0, sysctls: [{ name: 'kernel.x' }] };
      s.containers[0].securityContext = {
        privileged: true,
        capabilities: { add: ['SYS_ADMIN'] },
        procMount: 'Unmasked',
        seccompProfile: { type: 'Unconfined' },
      };
      s.containers[0].ports = [{ containerPort: 80, hostPort: 80 }];
      a['container.apparmor.security.beta.kubernetes.io/app'] = 'unconfined';
    });
    expect(podSecurityProblem(everything, 'privileged')).toBeUndefined();
    expect(podSecurityProblem(everything, 'baseline')).toBeDefined();
  });

  it('finds the pod template of every workload kind', () => {
    const spec = {
      containers: [
        { name: 'app', image: 'x', securityContext: { privileged: true } },
      ],
    };
    const template = { metadata: {}, spec };
    const objects = [
      ...['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'].map(
        kind => ({ kind, spec: { template } }),
      ),
      {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        spec: { template },
      },
      { kind: 'CronJob', spec: { jobTemplate: { spec: { template } } } },
      { kind: 'Pod', metadata: { name: 'p' }, spec },
      { kind: 'PodTemplate', template },
    ];
    for (const object of objects) {
      expect([object.kind, podSecurityProblem(object, 'baseline')]).toEqual([
        object.kind,
        { container: APP, rule: 'privileged containers are not allowed' },
      ]);
    }
    // A Pod's annotations are its own metadata's.
    expect(
      podSecurityProblem(
        {
          kind: 'Pod',
          metadata: {
            name: 'p',
            annotations: {
              'container.apparmor.security.beta.kubernetes.io/app':
                'unconfined',
            },
          },
          spec: { containers: [{ name: 'app', image: 'x' }] },
        },
        'baseline',
      ),
    ).toMatchObject({
      rule: expect.stringMatching(/^AppArmor profile 'unconfined'/),
    });
    expect(
      podSecurityProblem(
        { kind: 'ConfigMap', metadata: { name: 'c' }, data: {} } as object,
        'restricted',
      ),
    ).toBeUndefined();
  });

  it('finds the pods a custom kind makes, however deep its template sits', () => {
    const hostPod = {
      metadata: { labels: { job: 'x' } },
      spec: {
        hostPID: true,
        containers: [{ name: 'app', image: 'alpine' }],
        volumes: [{ name: 'root', hostPath: { path: '/' } }],
      },
    };
    // Argo Rollouts runs an AnalysisTemplate's job metric as a Job of this template.
    const analysisTemplate = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AnalysisTemplate',
      metadata: { name: 'check' },
      spec: {
        metrics: [
          { name: 'web', provider: { web: { url: 'http://x' } } },
          { name: 'job', provider: { job: { spec: { template: hostPod } } } },
        ],
      },
    };
    // A batch scheduler's job keeps a template per task.
    const batchJob = {
      apiVersion: 'batch.volcano.sh/v1alpha1',
      kind: 'Job',
      metadata: { name: 'train' },
      spec: { tasks: [{ name: 'worker', replicas: 2, template: hostPod }] },
    };
    for (const object of [analysisTemplate, batchJob]) {
      expect(podTemplatesOf(object)).toEqual([hostPod]);
      expect([object.kind, podSecurityProblem(object, 'baseline')]).toEqual([
        object.kind,
        { rule: "sharing the host's namespaces (hostPID) is not allowed" },
      ]);
    }
    // A template found both where the built-in kinds keep it and by the search is one template.
    const workload = { kind: 'Deployment', spec: { template: hostPod } };
    expect(podTemplatesOf(workload)).toEqual([hostPod]);
    // Two templates that share a spec (a YAML alias) are two: their annotations may differ.
    const unconfined = {
      metadata: {
        annotations: {
          'container.apparmor.security.beta.kubernetes.io/app': 'unconfined',
        },
      },
      spec: { containers: [{ name: 'app', image: 'alpine' }] },
    };
    const shared = {
      kind: 'Experiment',
      spec: {
        templates: [
          { name: 'a', template: { metadata: {}, spec: unconfined.spec } },
          { name: 'b', template: unconfined },
        ],
      },
    };
    expect(podTemplatesOf(shared)).toHaveLength(2);
    expect(podSecurityProblem(shared, 'baseline')).toMatchObject({
      rule: expect.stringMatching(/^AppArmor profile 'unconfined'/),
    });
    // Objects that only look alike are not pods: no `spec` with containers.
    expect(
      podTemplatesOf({
        kind: 'ConfigMap',
        data: { containers: '[]' },
        spec: { x: { containers: 'none' } },
      } as object),
    ).toEqual([]);
  });
});

describe('the workloads Fleet ships and builds', () => {
  const repo = path.resolve(__dirname, '../../../..');
  const yamlObjects = (dir: string) =>
    fs
      .readdirSync(dir)
      .filter(file => file.endsWith('.yaml'))
      .flatMap(file =>
        parseAllDocuments(fs.readFileSync(path.join(dir, file), 'utf8')).map(
          doc => ({ file, object: doc.toJS() as Loose }),
        ),
      );

  it.each([
    'examples/repositories/inventory/v1/deploy',
    'examples/repositories/inventory/v2/deploy',
    'examples/templates/fleet-app/deploy-skeleton',
  ])('%s meets baseline (the default of every project)', dir => {
    const objects = yamlObjects(path.join(repo, dir));
    // The check reads real pods: each folder holds a workload.
    expect(
      objects.filter(({ object }) => podTemplatesOf(object).length > 0),
    ).not.toHaveLength(0);
    expect(
      objects
        .map(({ file, object }) => [
          file,
          podSecurityProblem(object, 'baseline'),
        ])
        .filter(([, problem]) => problem),
    ).toEqual([]);
  });

  it('builds workloads that meet baseline, not restricted (no securityContext: the image decides the user)', () => {
    const { deployment: built } = buildManifests({
      name: 'shop',
      entityRef: 'component:default/shop',
      namespace: 'apps',
      defaultReplicas: 3,
      preStopSleepSeconds: 30,
      serverVersion: 'v1.29.4',
      spec: {
        image: 'ghcr.io/acme/shop:1.0.0',
        port: 9090,
        env: {
          A: '1',
          DB: { valueFrom: { secretKeyRef: { name: 'shop-db', key: 'url' } } },
        },
        resources: { requests: { cpu: '1' } },
        affinity: { nodeAffinity: {} },
        tolerations: [{ key: 'gpu', operator: 'Exists' }],
        ingress: { host: 'shop.example.com', tls: true },
      },
    });
    expect(answers(built)).toEqual({
      privileged: undefined,
      baseline: undefined,
      restricted: {
        container: "container 'shop'",
        rule: 'securityContext.runAsNonRoot: true (on the container or the pod) is required',
      },
    });
  });
});
