import type { JsonObject } from '@backstage/types';
import { ConfigReader } from '@backstage/config';
import { matchesPattern, ProjectGuard } from './ProjectGuard';
import { defaultProject, readProjects } from './projects';

const owners: Record<string, { owner?: string; deployers?: string }> = {
  'component:default/payments': { owner: 'group:default/payments' },
  'component:default/ledger': { owner: 'group:default/finance' },
  // Opens its deploys to a group of its own project.
  'component:default/checkout': {
    owner: 'group:default/payments',
    deployers: 'group:default/checkout',
  },
  // Names payments as its owner, and another project's group as its deployers.
  'component:default/intruder': {
    owner: 'group:default/payments',
    deployers: 'group:default/guests',
  },
};

function guard(projects: JsonObject[] | undefined) {
  return ProjectGuard.create({
    projects: readProjects(
      new ConfigReader(projects ? { projects } : {}),
      'default',
    ),
    ownerOf: async ref => owners[ref] ?? {},
    deployNamespace: 'default',
  });
}

const teams = [
  {
    name: 'payments',
    owners: ['payments', 'checkout'],
    clusters: { selector: 'env in (staging, prod)', names: ['lab'] },
    namespaces: ['payments', 'payments-*', '*'],
    secrets: ['payments-*'],
    ingressHosts: ['*.payments.example.com'],
  },
];

describe('matchesPattern', () => {
  it('matches * against any run of characters and nothing else as a wildcard', () => {
    expect(matchesPattern('payments-blue', 'payments-*')).toBe(true);
    expect(matchesPattern('payments', 'payments-*')).toBe(false);
    expect(matchesPattern('paymentsXblue', 'payments.blue')).toBe(false);
    expect(
      matchesPattern('a.payments.example.com', '*.payments.example.com'),
    ).toBe(true);
    expect(
      matchesPattern('payments.example.com', '*.payments.example.com'),
    ).toBe(false);
  });
});

describe('readProjects', () => {
  it('gives the built-in default project without fleet.projects: the deploy namespace and Secrets named after the application', () => {
    expect(readProjects(new ConfigReader({}), 'apps')).toEqual([
      defaultProject('apps'),
    ]);
    expect(defaultProject('apps')).toMatchObject({
      name: 'default',
      namespaces: ['apps'],
      secrets: ['{app}-*'],
      ingressHosts: [],
    });
  });

  it('reads owners as full group refs, and refuses a mistake naming the entry', () => {
    expect(
      readProjects(new ConfigReader({ projects: teams }), 'default')[0],
    ).toMatchObject({
      owners: ['group:default/payments', 'group:default/checkout'],
    });
    const bad = (project: object) => () =>
      readProjects(
        new ConfigReader({
          projects: [
            { name: 'p', owners: ['p'], namespaces: ['p'], ...project },
          ],
        }),
        'default',
      );
    expect(bad({ name: 'Not A Name' })).toThrow(/fleet\.projects\[0\]\.name/);
    expect(bad({ namespaces: [] })).toThrow(/at least one namespace/);
    expect(bad({ namespaces: ['Bad_NS'] })).toThrow(
      /namespaces entry 'Bad_NS'/,
    );
    expect(bad({ clusters: { selector: 'env in (' } })).toThrow(
      /clusters\.selector/,
    );
    expect(bad({ ingressHosts: ['*'] })).toThrow(/ingressHosts entry '\*'/);
    expect(bad({ kinds: { deny: ['deployment'] } })).toThrow(/kinds\.deny/);
    expect(bad({ clusters: {} })).toThrow(/give names and\/or a selector/);
    expect(bad({ secrets: ['{name}-*'] })).toThrow(
      /secrets entry '\{name\}-\*'/,
    );
    expect(bad({ podSecurity: 'strict' })).toThrow(
      "Invalid config value fleet.projects[0].podSecurity 'strict': expected one of privileged, baseline, restricted",
    );
  });

  it('holds pods to baseline unless a project names its pod security level', () => {
    expect(defaultProject('apps').podSecurity).toBe('baseline');
    const levels = readProjects(
      new ConfigReader({
        projects: ['baseline', 'restricted', 'privileged', undefined].map(
          (podSecurity, i) => ({
            name: `p${i}`,
            owners: [`p${i}`],
            namespaces: [`p${i}`],
            ...(podSecurity && { podSecurity }),
          }),
        ),
      }),
      'default',
    ).map(p => p.podSecurity);
    expect(levels).toEqual([
      'baseline',
      'restricted',
      'privileged',
      'baseline',
    ]);
  });
});

describe('ProjectGuard', () => {
  it('holds every component in the built-in project without asking the catalog', async () => {
    const asked: string[] = [];
    const g = ProjectGuard.create({
      projects: [defaultProject('default')],
      ownerOf: async ref => {
        asked.push(ref);
        return {};
      },
      deployNamespace: 'default',
    });
    await expect(
      g.checkWrite('component:default/anything', {
        appName: 'anything',
        spec: {
          env: {
            DB: {
              valueFrom: { secretKeyRef: { name: 'anything-db', key: 'p' } },
            },
          },
        },
      }),
    ).resolves.toMatchObject({ name: 'default' });
    expect(asked).toEqual([]);
    await expect(
      g.checkWrite('component:default/anything', {
        appName: 'anything',
        spec: { namespace: 'argocd' },
      }),
    ).rejects.toThrow("namespace 'argocd' is not in project default");
    await expect(
      g.checkWrite('component:default/anything', {
        appName: 'anything',
        spec: {
          env: {
            DB: {
              valueFrom: { configMapKeyRef: { name: 'other-cfg', key: 'p' } },
            },
          },
        },
      }),
    ).rejects.toThrow(
      "ConfigMap of DB: 'other-cfg' is not in project default (its secrets: anything-*)",
    );
    await expect(
      g.checkWrite('component:default/anything', {
        appName: 'anything',
        spec: { ingress: { host: 'a.example.com' } },
      }),
    ).rejects.toThrow('it allows no Ingress host');
  });

  it('never allows a system namespace, even to a project whose pattern is *', async () => {
    await expect(
      guard(teams).checkWrite('component:default/payments', {
        appName: 'payments',
        spec: { namespace: 'kube-system' },
      }),
    ).rejects.toThrow("namespace 'kube-system' is a system namespace");
  });

  it('checks env references of placement overrides and of releases', async () => {
    const secret = (name: string) => ({
      X: { valueFrom: { secretKeyRef: { name, key: 'k' } } },
    });
    const g = guard(teams);
    await expect(
      g.checkWrite('component:default/payments', {
        appName: 'payments',
        spec: { namespace: 'payments' },
        placement: { overrides: [{ clusters: ['lab'], env: secret('vault') }] },
      }),
    ).rejects.toThrow("Secret of X: 'vault' is not in project payments");
    await expect(
      g.checkWrite('component:default/payments', {
        appName: 'payments',
        spec: { namespace: 'payments' },
        env: secret('ledger-db'),
      }),
    ).rejects.toThrow("Secret of X: 'ledger-db' is not in project payments");
  });

  it('lets a project use the clusters it names or selects, and no other', async () => {
    const g = guard(teams);
    const check = (name: string, labels: Record<string, string>) =>
      g.checkClusters('component:default/payments', [{ name, labels }]);
    await expect(check('prod-1', { env: 'prod' })).resolves.toBeDefined();
    await expect(check('lab', {})).resolves.toBeDefined();
    await expect(check('dev-1', { env: 'dev' })).rejects.toThrow(
      "cluster 'dev-1' is not in project payments (its clusters: names: lab; selector: env in (staging, prod))",
    );
    const payments = {
      entityRef: 'component:default/payments',
      name: 'payments',
      spec: { namespace: 'payments' },
    };
    expect(
      await g.placementRefusal(payments, { name: 'dev-1', labels: {} }),
    ).toContain("cluster 'dev-1' is not in project payments");
    expect(
      await g.placementRefusal(payments, { name: 'lab', labels: {} }),
    ).toBeUndefined();
    // A stored spec the project no longer allows is placed nowhere new.
    expect(
      await g.placementRefusal(
        {
          ...payments,
          spec: {
            env: {
              DB: {
                valueFrom: { secretKeyRef: { name: 'ledger-db', key: 'p' } },
              },
            },
          },
        },
        { name: 'lab', labels: {} },
      ),
    ).toContain("'ledger-db' is not in project payments");
  });

  it('answers 503 when the catalog cannot be read, letting nobody in', async () => {
    const g = ProjectGuard.create({
      projects: readProjects(new ConfigReader({ projects: teams }), 'default'),
      ownerOf: async () => {
        throw new Error('ECONNREFUSED');
      },
      deployNamespace: 'default',
    });
    await expect(
      g.projectOf('component:default/payments'),
    ).rejects.toMatchObject({
      name: 'ServiceUnavailableError',
    });
    expect(
      await g.mayCreateNamespace({
        entityRef: 'component:default/payments',
        appName: 'payments',
        namespace: 'payments',
      }),
    ).toBe(false);
  });

  it('refuses a rollback to a revision whose namespace or Secret is outside the project now', async () => {
    const g = guard(teams);
    const revision = (namespace: string | undefined, secret?: string) =>
      g.revisionRefusal({
        entityRef: 'component:default/payments',
        appName: 'payments',
        namespace,
        env: secret
          ? { DB: { valueFrom: { secretKeyRef: { name: secret, key: 'p' } } } }
          : undefined,
      });
    expect(await revision('payments', 'payments-db')).toBeUndefined();
    expect(await revision('payments', 'ledger-db')).toBe(
      "revision refused: Secret of DB: 'ledger-db' is not in project payments (its secrets: payments-*)",
    );
    expect(await revision('kube-system')).toContain('system namespace');
  });

  it('refuses a component whose owner is in no project, and one the catalog does not know', async () => {
    const g = guard(teams);
    await expect(g.projectOf('component:default/ledger')).rejects.toThrow(
      'its owner group:default/finance is not among the owners of any project',
    );
    await expect(g.projectOf('component:default/ghost')).rejects.toThrow(
      'it has no owner in the catalog',
    );
  });

  it("refuses a component that opens its deploys to a group outside its project's owners", async () => {
    // A caller's write reads the catalog afresh: the policy has just read it too.
    const asked: Array<[string, boolean]> = [];
    const recording = ProjectGuard.create({
      projects: readProjects(new ConfigReader({ projects: teams }), 'default'),
      ownerOf: async (ref, options) => {
        asked.push([ref, !!options?.fresh]);
        return owners[ref] ?? {};
      },
      deployNamespace: 'default',
    });
    await recording.checkWrite('component:default/payments', {
      appName: 'payments',
    });
    await recording.projectOf('component:default/payments');
    expect(asked).toEqual([
      ['component:default/payments', true],
      ['component:default/payments', false],
    ]);
    const g = guard(teams);
    await expect(
      g.projectOf('component:default/checkout'),
    ).resolves.toMatchObject({ name: 'payments' });
    // Its own catalog entry names payments as its owner and guests as its deployers: a guest
    // would otherwise deploy into payments' namespaces with payments' Secrets.
    const write = {
      appName: 'intruder',
      spec: {
        namespace: 'payments',
        env: {
          DB: {
            valueFrom: { secretKeyRef: { name: 'payments-db', key: 'p' } },
          },
        },
      },
    };
    const refusal =
      'component:default/intruder names group:default/guests in its cnp.io/deployers annotation, which is not among the owners of its project payments (group:default/payments, group:default/checkout): a component may open its deploys only to a group of its own project';
    await expect(g.projectOf('component:default/intruder')).rejects.toThrow(
      refusal,
    );
    await expect(
      g.checkWrite('component:default/intruder', write),
    ).rejects.toThrow(refusal);
    await expect(
      g.objectsRefusalOf({
        entityRef: 'component:default/intruder',
        appName: 'intruder',
        objects: [],
      }),
    ).rejects.toThrow(refusal);
  });

  it('may create only a namespace the project names exactly, never through a pattern', async () => {
    const g = guard(teams);
    const may = (namespace: string) =>
      g.mayCreateNamespace({
        entityRef: 'component:default/payments',
        appName: 'payments',
        namespace,
      });
    expect(await may('payments')).toBe(true);
    expect(await may('payments-blue')).toBe(false);
    expect(await may('anything')).toBe(false);
    expect(
      await g.mayCreateNamespace({
        entityRef: 'component:default/ghost',
        appName: 'ghost',
        namespace: 'payments',
      }),
    ).toBe(false);
  });
});

describe('ProjectGuard.objectsRefusal', () => {
  const ingress = (spec: JsonObject) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', namespace: 'payments' },
    spec,
  });
  const backend = {
    service: { name: 'web', port: { number: 80 } },
  };
  const rule = (host?: string) => ({
    ...(host !== undefined ? { host } : {}),
    http: { paths: [{ path: '/', pathType: 'Prefix', backend }] },
  });
  const refusal = (objects: object[]) =>
    guard(teams).objectsRefusalOf({
      entityRef: 'component:default/payments',
      appName: 'payments',
      objects,
    });

  it("lets an Ingress of the manifests answer for the project's hosts only", async () => {
    await expect(
      refusal([ingress({ rules: [rule('shop.payments.example.com')] })]),
    ).resolves.toBeUndefined();
    await expect(
      refusal([
        ingress({
          rules: [rule('shop.payments.example.com'), rule('login.bank.com')],
        }),
      ]),
    ).resolves.toBe(
      "Ingress 'web': Ingress host 'login.bank.com' is not in project payments (its hosts: *.payments.example.com)",
    );
    await expect(
      refusal([ingress({ rules: [rule('*.payments.example.com')] })]),
    ).resolves.toMatch("Ingress host '*.payments.example.com' is a wildcard");
  });

  it('refuses an Ingress that would answer for every host: a rule without one, or a default backend', async () => {
    await expect(refusal([ingress({ rules: [rule()] })])).resolves.toMatch(
      "Ingress 'web': a rule names no host",
    );
    await expect(
      refusal([ingress({ defaultBackend: backend })]),
    ).resolves.toMatch("Ingress 'web': a default backend");
  });

  it("checks an Ingress's TLS hosts and certificate Secret", async () => {
    await expect(
      refusal([
        ingress({
          rules: [rule('shop.payments.example.com')],
          tls: [
            {
              hosts: ['shop.payments.example.com'],
              secretName: 'payments-tls',
            },
          ],
        }),
      ]),
    ).resolves.toBeUndefined();
    await expect(
      refusal([
        ingress({
          rules: [rule('shop.payments.example.com')],
          tls: [{ hosts: ['login.bank.com'], secretName: 'payments-tls' }],
        }),
      ]),
    ).resolves.toMatch("Ingress host 'login.bank.com' is not in project");
    await expect(
      refusal([
        ingress({
          rules: [rule('shop.payments.example.com')],
          tls: [
            {
              hosts: ['shop.payments.example.com'],
              secretName: 'bank-wildcard-cert',
            },
          ],
        }),
      ]),
    ).resolves.toMatch(
      "TLS Secret 'bank-wildcard-cert' is not in project payments",
    );
  });

  const workload = (podSpec: JsonObject, kind = 'Deployment') => ({
    apiVersion: ['Job', 'CronJob'].includes(kind) ? 'batch/v1' : 'apps/v1',
    kind,
    metadata: { name: 'web', namespace: 'payments' },
    spec:
      kind === 'CronJob'
        ? { jobTemplate: { spec: { template: { spec: podSpec } } } }
        : { template: { spec: podSpec } },
  });
  const container = (extra: JsonObject) => ({
    name: 'web',
    image: 'nginx:1.27',
    ...extra,
  });

  it('lets pods of the manifests read Secrets and ConfigMaps of the project only', async () => {
    await expect(
      refusal([
        workload({
          containers: [
            container({
              envFrom: [{ secretRef: { name: 'payments-db' } }],
              env: [
                {
                  name: 'KEY',
                  valueFrom: {
                    configMapKeyRef: { name: 'payments-cfg', key: 'k' },
                  },
                },
              ],
            }),
          ],
          volumes: [
            { name: 'c', secret: { secretName: 'payments-cert' } },
            { name: 'ca', configMap: { name: 'kube-root-ca.crt' } },
          ],
        }),
      ]),
    ).resolves.toBeUndefined();
    const refused: Array<[string, JsonObject, string?]> = [
      [
        'env',
        {
          containers: [
            container({
              env: [
                {
                  name: 'PASSWORD',
                  valueFrom: {
                    secretKeyRef: { name: 'ledger-db', key: 'password' },
                  },
                },
              ],
            }),
          ],
        },
      ],
      [
        'envFrom',
        {
          initContainers: [
            container({ envFrom: [{ secretRef: { name: 'ledger-db' } }] }),
          ],
          containers: [container({})],
        },
      ],
      [
        'volume',
        {
          containers: [container({})],
          volumes: [{ name: 'db', secret: { secretName: 'ledger-db' } }],
        },
      ],
      [
        'projected volume',
        {
          containers: [container({})],
          volumes: [
            {
              name: 'db',
              projected: { sources: [{ secret: { name: 'ledger-db' } }] },
            },
          ],
        },
        'CronJob',
      ],
    ];
    const answers = await Promise.all(
      refused.map(async ([how, podSpec, kind]) => [
        how,
        await refusal([workload(podSpec, kind)]),
      ]),
    );
    expect(Object.fromEntries(answers)).toEqual(
      Object.fromEntries(
        refused.map(([how, , kind]) => [
          how,
          `${
            kind ?? 'Deployment'
          } 'web': Secret 'ledger-db' is not in project payments (its secrets: payments-*)`,
        ]),
      ),
    );
  });

  it("checks the pods a custom kind makes: an AnalysisTemplate's job", async () => {
    // Argo Rollouts runs this template as a Job when a canary step asks for the analysis.
    const analysisTemplate = (podSpec: JsonObject) => ({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AnalysisTemplate',
      metadata: { name: 'check', namespace: 'payments' },
      spec: {
        metrics: [
          {
            name: 'smoke',
            provider: { job: { spec: { template: { spec: podSpec } } } },
          },
        ],
      },
    });
    await expect(
      refusal([
        analysisTemplate({
          containers: [
            container({
              env: [
                {
                  name: 'PASSWORD',
                  valueFrom: {
                    secretKeyRef: { name: 'ledger-db', key: 'password' },
                  },
                },
              ],
            }),
          ],
          restartPolicy: 'Never',
        }),
      ]),
    ).resolves.toBe(
      "AnalysisTemplate 'check': Secret 'ledger-db' is not in project payments (its secrets: payments-*)",
    );
    await expect(
      refusal([
        analysisTemplate({
          containers: [container({ securityContext: { privileged: true } })],
          restartPolicy: 'Never',
        }),
      ]),
    ).resolves.toBe(
      "AnalysisTemplate 'check' container 'web': privileged containers are not allowed by project payments's pod security (baseline)",
    );
    await expect(
      refusal([
        analysisTemplate({
          containers: [container({})],
          restartPolicy: 'Never',
        }),
      ]),
    ).resolves.toBeUndefined();
  });

  it("refuses objects that reach beyond the component's own: identities, rights, workloads, routes", async () => {
    const meta = (kind: string, name: string) => ({
      kind,
      metadata: { name, namespace: 'payments' },
    });
    const account = meta('ServiceAccount', 'web');
    const rbac = 'rbac.authorization.k8s.io';
    const role = (rules: JsonObject[], kind = 'Role') => ({
      ...(kind === 'Role'
        ? meta('Role', 'web')
        : { kind, metadata: { name: 'web' } }),
      apiVersion: `${rbac}/v1`,
      rules,
    });
    const binding = (roleRef: JsonObject, subjects: JsonObject[]) => ({
      ...meta('RoleBinding', 'web'),
      apiVersion: `${rbac}/v1`,
      roleRef: { apiGroup: rbac, ...roleRef },
      subjects,
    });
    const asWeb = { kind: 'ServiceAccount', name: 'web' };
    const runAs = (serviceAccountName: string) =>
      workload({ serviceAccountName, containers: [container({})] });
    const grant = (resources: string[], verbs: string[], more = {}) => ({
      apiGroups: [''],
      resources,
      verbs,
      ...more,
    });
    const rollout = (strategy: JsonObject) => ({
      ...meta('Rollout', 'web'),
      apiVersion: 'argoproj.io/v1alpha1',
      spec: { strategy },
    });
    // What a component may do with its own: run as its ServiceAccount (or the default one, or
    // none: an empty name is none), bind it to its Role that reads and writes its own Secret and
    // ConfigMap by name, elects a leader with a Lease and reads pods; scale its own workload and
    // route its own Services.
    await expect(
      refusal([
        account,
        meta('Service', 'web'),
        meta('Service', 'web-canary'),
        role([
          grant(['secrets'], ['get'], { resourceNames: ['payments-db'] }),
          grant(['configmaps'], ['get', 'update'], {
            resourceNames: ['payments-cfg'],
          }),
          {
            apiGroups: ['coordination.k8s.io'],
            resources: ['leases'],
            verbs: ['get', 'create', 'update'],
          },
          grant(['pods', 'pods/log', 'pods/status'], ['get', 'list', 'watch']),
          grant(['events'], ['create', 'patch']),
          {
            apiGroups: ['apps'],
            resources: ['deployments/scale'],
            verbs: ['get'],
          },
        ]),
        binding({ kind: 'Role', name: 'web' }, [asWeb]),
        binding({ kind: 'Role', name: 'web' }, [{ ...asWeb, namespace: '' }]),
        runAs('web'),
        runAs('default'),
        runAs(''),
        {
          ...meta('HorizontalPodAutoscaler', 'web'),
          spec: {
            scaleTargetRef: {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name: 'web',
            },
            maxReplicas: 3,
          },
        },
        rollout({
          canary: {
            stableService: 'web',
            canaryService: 'web-canary',
            trafficRouting: {
              maxTrafficWeight: 100,
              managedRoutes: [{ name: 'header-route' }],
            },
          },
        }),
      ]),
    ).resolves.toBeUndefined();
    const roleRefusal = (rules: JsonObject[]) => [role(rules)];
    const refused: Array<[string, object[], string]> = [
      [
        "another team's ServiceAccount",
        [runAs('ci-deployer')],
        "Deployment 'web': pods run as ServiceAccount 'ci-deployer', which the component's manifests do not hold",
      ],
      [
        "another team's ServiceAccount, by the deprecated field",
        [
          workload({
            serviceAccount: 'ci-deployer',
            containers: [container({})],
          }),
        ],
        "pods run as ServiceAccount 'ci-deployer'",
      ],
      [
        'a ClusterRole that reads every Secret',
        [account, binding({ kind: 'ClusterRole', name: 'admin' }, [asWeb])],
        "RoleBinding 'web': roleRef ClusterRole 'admin' is not a role of the component's manifests",
      ],
      [
        "view, which reads other components' ConfigMaps",
        [account, binding({ kind: 'ClusterRole', name: 'view' }, [asWeb])],
        "roleRef ClusterRole 'view' is not a role of the component's manifests",
      ],
      [
        'rights to a subject not its own',
        [
          role([]),
          binding({ kind: 'Role', name: 'web' }, [
            { kind: 'Group', name: 'system:authenticated' },
          ]),
        ],
        "RoleBinding 'web': subject Group 'system:authenticated' is not a ServiceAccount of the component's manifests",
      ],
      [
        'an account of the same name in another namespace',
        [
          account,
          role([]),
          binding({ kind: 'Role', name: 'web' }, [
            { ...asWeb, namespace: 'finance' },
          ]),
        ],
        "subject ServiceAccount 'web' of namespace 'finance' is not a ServiceAccount of the component's manifests",
      ],
      [
        'every Secret of the namespace',
        roleRefusal([grant(['secrets'], ['get'])]),
        "Role 'web': a rule on secrets without resourceNames reaches every Secret of the namespace",
      ],
      [
        'every ConfigMap of the namespace',
        roleRefusal([grant(['configmaps'], ['get', 'list'])]),
        "Role 'web': a rule on configmaps without resourceNames reaches every ConfigMap of the namespace",
      ],
      [
        "another project's Secret",
        roleRefusal([
          grant(['secrets'], ['get'], { resourceNames: ['ledger-db'] }),
        ]),
        "Secret 'ledger-db' is not in project payments",
      ],
      [
        'a wildcard',
        roleRefusal([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]),
        "Role 'web': a rule with a wildcard (*)",
      ],
      [
        "every resource's exec",
        roleRefusal([grant(['*/exec'], ['create'])]),
        "Role 'web': a rule with a wildcard (*)",
      ],
      [
        'exec into pods',
        roleRefusal([grant(['pods/exec'], ['get'])]),
        "Role 'web': a rule lets the component's pods get pods/exec",
      ],
      [
        'tokens of any account',
        roleRefusal([grant(['serviceaccounts/token'], ['create'])]),
        "a rule lets the component's pods create serviceaccounts/token",
      ],
      [
        'scaling other workloads',
        roleRefusal([
          {
            apiGroups: ['apps'],
            resources: ['deployments/scale'],
            verbs: ['patch'],
          },
        ]),
        "a rule lets the component's pods patch deployments/scale",
      ],
      [
        'pods of its own making',
        roleRefusal([grant(['pods'], ['get', 'create'])]),
        "Role 'web': a rule lets the component's pods create pods: a role of the manifests may write only leases, events",
      ],
      [
        'Services and Ingresses of its own making',
        roleRefusal([grant(['services'], ['create', 'patch'])]),
        "a rule lets the component's pods create, patch services",
      ],
      [
        "another group's resource named like a Lease",
        roleRefusal([
          {
            apiGroups: ['coordination.k8s.io', 'jobs.example.com'],
            resources: ['leases'],
            verbs: ['create'],
          },
        ]),
        "a rule lets the component's pods create leases",
      ],
      [
        'Argo analyses, which run pods as the controller',
        roleRefusal([
          {
            apiGroups: ['argoproj.io'],
            resources: ['analysisruns'],
            verbs: ['create'],
          },
        ]),
        "a rule lets the component's pods create analysisruns",
      ],
      [
        'bind',
        roleRefusal([
          { apiGroups: [rbac], resources: ['clusterroles'], verbs: ['bind'] },
        ]),
        "Role 'web': the verb 'bind' grants rights beyond the role's own",
      ],
      [
        'impersonate',
        roleRefusal([grant(['serviceaccounts'], ['impersonate'])]),
        "the verb 'impersonate'",
      ],
      [
        'escalate',
        roleRefusal([
          { apiGroups: [rbac], resources: ['roles'], verbs: ['escalate'] },
        ]),
        "the verb 'escalate'",
      ],
      [
        "a token for another team's ServiceAccount",
        [
          {
            kind: 'Secret',
            type: 'kubernetes.io/service-account-token',
            metadata: {
              name: 'payments-token',
              namespace: 'payments',
              annotations: {
                'kubernetes.io/service-account.name': 'ci-deployer',
              },
            },
          },
        ],
        "Secret 'payments-token': a token Secret for ServiceAccount 'ci-deployer', which the component's manifests do not hold",
      ],
      [
        "an analysis argument read from another project's Secret",
        [
          {
            ...meta('AnalysisTemplate', 'check'),
            apiVersion: 'argoproj.io/v1alpha1',
            spec: {
              args: [
                {
                  name: 'token',
                  valueFrom: {
                    secretKeyRef: { name: 'ledger-db', key: 'password' },
                  },
                },
              ],
              metrics: [{ name: 'm', provider: { web: { url: 'http://x' } } }],
            },
          },
        ],
        "AnalysisTemplate 'check': argument 'token': Secret 'ledger-db' is not in project payments",
      ],
      [
        "an autoscaler of another component's Deployment",
        [
          {
            ...meta('HorizontalPodAutoscaler', 'web'),
            spec: {
              scaleTargetRef: {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                name: 'checkout',
              },
              maxReplicas: 1,
            },
          },
        ],
        "HorizontalPodAutoscaler 'web': it takes over Deployment 'checkout', which the component's manifests do not hold",
      ],
      [
        "a Rollout of another component's Deployment",
        [
          {
            ...meta('Rollout', 'web'),
            apiVersion: 'argoproj.io/v1alpha1',
            spec: {
              workloadRef: {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                name: 'checkout',
                scaleDown: 'onsuccess',
              },
            },
          },
        ],
        "Rollout 'web': it takes over Deployment 'checkout', which the component's manifests do not hold",
      ],
      [
        "a Rollout steering another component's Service",
        [
          meta('Service', 'web'),
          rollout({
            canary: { stableService: 'checkout', canaryService: 'web' },
          }),
        ],
        "Rollout 'web': it takes over Service 'checkout'",
      ],
      [
        "a Rollout steering another component's Ingress",
        [
          meta('Service', 'web'),
          rollout({
            canary: {
              stableService: 'web',
              trafficRouting: { nginx: { stableIngress: 'checkout' } },
            },
          }),
        ],
        "Rollout 'web': it takes over Ingress 'checkout'",
      ],
      [
        "a Rollout steering another component's VirtualService",
        [
          rollout({
            canary: {
              trafficRouting: {
                istio: { virtualServices: [{ name: 'storefront' }] },
              },
            },
          }),
        ],
        "Rollout 'web': it takes over VirtualService 'storefront'",
      ],
      [
        "a Rollout's ping-pong Service of another component",
        [
          meta('Service', 'web'),
          rollout({
            canary: {
              pingPong: { pingService: 'web', pongService: 'checkout' },
            },
          }),
        ],
        "Rollout 'web': it takes over Service 'checkout'",
      ],
      [
        "a VirtualService of another namespace (Argo reads 'name.namespace')",
        [
          rollout({
            canary: {
              trafficRouting: {
                istio: { virtualService: { name: 'checkout.finance' } },
              },
            },
          }),
        ],
        "VirtualService 'checkout.finance' names another namespace",
      ],
      [
        'the Gateway API plugin in another namespace',
        [
          rollout({
            canary: {
              trafficRouting: {
                plugins: {
                  'argoproj-labs/gatewayAPI': {
                    httpRoute: 'web',
                    namespace: 'finance',
                  },
                },
              },
            },
          }),
        ],
        "the Gateway API plugin steers routes of namespace 'finance'",
      ],
      [
        "a route kind of the Gateway API plugin that is another component's",
        [
          rollout({
            canary: {
              trafficRouting: {
                plugins: {
                  'argoproj-labs/gatewayAPI': { grpcRoute: 'checkout' },
                },
              },
            },
          }),
        ],
        "it takes over GRPCRoute 'checkout'",
      ],
      [
        'a traffic router Fleet does not check',
        [
          rollout({
            canary: {
              trafficRouting: { ambassador: { mappings: ['checkout'] } },
            },
          }),
        ],
        'traffic routing by ambassador is not one Fleet checks',
      ],
      [
        'a traffic plugin Fleet does not check',
        [
          rollout({
            canary: {
              trafficRouting: { plugins: { 'acme/router': { route: 'x' } } },
            },
          }),
        ],
        'traffic routing by the plugin acme/router is not one Fleet checks',
      ],
    ];
    for (const [how, objects, message] of refused) {
      expect([how, await refusal(objects)]).toEqual([
        how,
        expect.stringContaining(message),
      ]);
    }

    // Kinds a project allows beyond the default list get the same rules.
    const wide = guard([
      {
        ...teams[0],
        kinds: { allow: ['Job.batch.volcano.sh', 'ClusterAnalysisTemplate'] },
      },
    ]);
    const wideRefused: Array<[string, object[], string]> = [
      [
        "a cluster-wide analysis argument read from another project's Secret",
        [
          {
            kind: 'ClusterAnalysisTemplate',
            apiVersion: 'argoproj.io/v1alpha1',
            metadata: { name: 'check' },
            spec: {
              args: [
                {
                  name: 'token',
                  valueFrom: {
                    secretKeyRef: { name: 'ledger-db', key: 'password' },
                  },
                },
              ],
            },
          },
        ],
        "ClusterAnalysisTemplate 'check': argument 'token': Secret 'ledger-db' is not in project payments",
      ],
      [
        "another team's ServiceAccount for the pods of another group's kind",
        [
          {
            apiVersion: 'batch.volcano.sh/v1alpha1',
            kind: 'Job',
            metadata: { name: 'train', namespace: 'payments' },
            spec: {
              tasks: [
                {
                  template: {
                    spec: {
                      serviceAccountName: 'ci-deployer',
                      containers: [container({})],
                    },
                  },
                },
              ],
            },
          },
        ],
        "Job 'train': pods run as ServiceAccount 'ci-deployer'",
      ],
    ];
    for (const [how, objects, message] of wideRefused) {
      expect([
        how,
        await wide.objectsRefusalOf({
          entityRef: 'component:default/payments',
          appName: 'payments',
          objects,
        }),
      ]).toEqual([how, expect.stringContaining(message)]);
    }

    // Where a project allows cluster-wide RBAC, a ClusterRole applies in every namespace: it may
    // only read, and not what holds other teams' Secrets, ConfigMaps, pods or nodes; one that
    // would add its rules to others' (aggregation) is refused.
    const operators = guard([
      {
        ...teams[0],
        kinds: {
          allow: ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'],
        },
      },
    ]);
    const clusterRefusal = (objects: object[]) =>
      operators.objectsRefusalOf({
        entityRef: 'component:default/payments',
        appName: 'payments',
        objects,
      });
    const clusterBinding = (subjects: JsonObject[]) => ({
      kind: 'ClusterRoleBinding',
      metadata: { name: 'web' },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'web' },
      subjects,
    });
    const podReader = role(
      [
        {
          apiGroups: ['widgets.example.com'],
          resources: ['widgets'],
          verbs: ['get', 'list', 'watch'],
        },
      ],
      'ClusterRole',
    );
    await expect(
      clusterRefusal([
        account,
        podReader,
        clusterBinding([{ ...asWeb, namespace: 'payments' }]),
      ]),
    ).resolves.toBeUndefined();
    await expect(
      clusterRefusal([
        account,
        podReader,
        clusterBinding([{ ...asWeb, namespace: 'kube-system' }]),
      ]),
    ).resolves.toContain(
      "ClusterRoleBinding 'web': subject ServiceAccount 'web' of namespace 'kube-system' is not a ServiceAccount of the component's manifests",
    );
    for (const [rules, message] of [
      [
        [grant(['secrets'], ['get'], { resourceNames: ['payments-db'] })],
        "ClusterRole 'web': a rule lets the component's pods get secrets in every namespace",
      ],
      [
        [grant(['pods'], ['list'])],
        "ClusterRole 'web': a rule lets the component's pods list pods in every namespace",
      ],
      [[grant(['nodes/log'], ['get'])], 'get nodes/log in every namespace'],
      [
        [
          {
            apiGroups: ['coordination.k8s.io'],
            resources: ['leases'],
            verbs: ['update'],
          },
        ],
        "ClusterRole 'web': a rule lets the component's pods update leases: a ClusterRole applies in every namespace, and one of the manifests may only read",
      ],
      [
        [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
        "ClusterRole 'web': a rule on nonResourceURLs",
      ],
    ] as const) {
      await expect(
        clusterRefusal([role(rules as unknown as JsonObject[], 'ClusterRole')]),
      ).resolves.toContain(message);
    }
    await expect(
      clusterRefusal([
        { ...podReader, aggregationRule: { clusterRoleSelectors: [] } },
      ]),
    ).resolves.toContain('an aggregated ClusterRole (aggregationRule)');
    await expect(
      clusterRefusal([
        {
          ...podReader,
          metadata: {
            name: 'web',
            labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' },
          },
        },
      ]),
    ).resolves.toContain(
      "ClusterRole 'web': an aggregated ClusterRole (rbac.authorization.k8s.io/aggregate-to-view) adds rules to roles other subjects hold",
    );
  });

  it("tells kinds apart by their API group: another group's Job or Role is not Kubernetes'", async () => {
    const volcanoJob = {
      apiVersion: 'batch.volcano.sh/v1alpha1',
      kind: 'Job',
      metadata: { name: 'train', namespace: 'payments' },
      spec: { tasks: [] },
    };
    await expect(refusal([volcanoJob])).resolves.toMatch(
      /^Job 'train': kind Job\.batch\.volcano\.sh is not allowed in project payments/,
    );
    const withVolcano = guard([
      {
        ...teams[0],
        kinds: {
          allow: [
            'Job.batch.volcano.sh',
            'Certificate',
            'StatefulSet.apps.kruise.io',
            'HorizontalPodAutoscaler',
            'Role.iam.services.k8s.aws',
            'RoleBinding',
            'ServiceAccount',
          ],
        },
      },
    ]);
    const refusalIn = (objects: object[]) =>
      withVolcano.objectsRefusalOf({
        entityRef: 'component:default/payments',
        appName: 'payments',
        objects,
      });
    await expect(
      refusalIn([
        volcanoJob,
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          metadata: { name: 'web', namespace: 'payments' },
        },
      ]),
    ).resolves.toBeUndefined();
    // A kind listed with Kubernetes' own group is that kind, in a deny list too.
    const noRoles = guard([
      { ...teams[0], kinds: { deny: ['Role.rbac.authorization.k8s.io'] } },
    ]);
    await expect(
      noRoles.objectsRefusalOf({
        entityRef: 'component:default/payments',
        appName: 'payments',
        objects: [
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'Role',
            metadata: { name: 'web', namespace: 'payments' },
          },
        ],
      }),
    ).resolves.toBe("Role 'web': kind Role is denied in project payments");
    // The pods a kind of another group makes are still held to the project's rules.
    await expect(
      refusalIn([
        {
          ...volcanoJob,
          spec: {
            tasks: [
              {
                template: {
                  spec: { hostNetwork: true, containers: [container({})] },
                },
              },
            ],
          },
        },
      ]),
    ).resolves.toContain("sharing the host's namespaces (hostNetwork)");
    // A reference means the group it names: an autoscaler of Kubernetes' StatefulSet `checkout`
    // does not scale the manifests' OpenKruise StatefulSet of that name.
    await expect(
      refusalIn([
        {
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'StatefulSet',
          metadata: { name: 'checkout', namespace: 'payments' },
          spec: {},
        },
        {
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name: 'web', namespace: 'payments' },
          spec: {
            scaleTargetRef: {
              apiVersion: 'apps/v1',
              kind: 'StatefulSet',
              name: 'checkout',
            },
            maxReplicas: 2,
          },
        },
      ]),
    ).resolves.toBe(
      "HorizontalPodAutoscaler 'web': it takes over StatefulSet 'checkout', which the component's manifests do not hold",
    );
    // Nor does a RoleBinding bind a cloud controller's Role of the manifests: it binds RBAC's.
    await expect(
      refusalIn([
        {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: 'web', namespace: 'payments' },
        },
        {
          apiVersion: 'iam.services.k8s.aws/v1alpha1',
          kind: 'Role',
          metadata: { name: 'ns-admin', namespace: 'payments' },
          spec: {},
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'web', namespace: 'payments' },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'Role',
            name: 'ns-admin',
          },
          subjects: [{ kind: 'ServiceAccount', name: 'web' }],
        },
      ]),
    ).resolves.toContain(
      "RoleBinding 'web': roleRef Role 'ns-admin' is not a role of the component's manifests",
    );
  });

  it('reads manifests only from the sources a project lists', async () => {
    const sourced = guard([
      {
        ...teams[0],
        sources: [
          'https://git.example.com/acme/{app}',
          'https://github.com/acme/payments-*',
        ],
      },
    ]);
    const from = (sourceUrl: string) =>
      sourced.objectsRefusalOf({
        entityRef: 'component:default/payments',
        appName: 'payments',
        objects: [],
        sourceUrl,
      });
    await expect(
      from('https://git.example.com/acme/payments/tree/main/deploy'),
    ).resolves.toBeUndefined();
    await expect(
      from('https://github.com/acme/payments-api/blob/main/all.yaml'),
    ).resolves.toBeUndefined();
    // Compared as URLs: the host's case and a default port do not matter.
    await expect(
      from('https://GitHub.com:443/acme/payments-api/tree/main'),
    ).resolves.toBeUndefined();
    // A query never fills a pattern's tail (a reader of the path would not read it).
    const deployOnly = guard([
      { ...teams[0], sources: ['https://git.example.com/acme/*/deploy'] },
    ]);
    await expect(
      deployOnly.sourceRefusalOf({
        entityRef: 'component:default/payments',
        appName: 'payments',
        url: 'https://git.example.com/acme/ledger/tree/main?x=/deploy',
      }),
    ).resolves.toContain('are not among project payments');
    for (const url of [
      'https://github.com/acme/ledger/tree/main/deploy',
      'https://git.example.com/acme/payments-evil/tree/main',
      'https://git.example.com.evil.io/acme/payments/tree/main',
    ]) {
      await expect(from(url)).resolves.toBe(
        `manifests from ${url} are not among project payments's sources (https://git.example.com/acme/payments, https://github.com/acme/payments-*)`,
      );
    }
    // Without sources, any URL (and the objects' own rules still hold).
    await expect(refusal([])).resolves.toBeUndefined();
    await expect(
      guard(teams).objectsRefusalOf({
        entityRef: 'component:default/payments',
        appName: 'payments',
        objects: [],
        sourceUrl: 'https://github.com/acme/ledger/tree/main/deploy',
      }),
    ).resolves.toBeUndefined();
    expect(() =>
      readProjects(
        new ConfigReader({
          projects: [{ ...teams[0], sources: ['https://*.example.com/x'] }],
        }),
        'default',
      ),
    ).toThrow("a '*' in the host would match any host");
    for (const [source, message] of [
      ['git@x:y', 'expected an http(s) URL with a path'],
      ['https:*', 'expected an http(s) URL with a path'],
      [
        'https://GitHub.com/acme/x',
        'write the host as URLs compare it (https://github.com)',
      ],
      [
        'https://github.com:443/acme/x',
        'write the host as URLs compare it (https://github.com)',
      ],
    ]) {
      expect(() =>
        readProjects(
          new ConfigReader({ projects: [{ ...teams[0], sources: [source] }] }),
          'default',
        ),
      ).toThrow(message);
    }
  });

  it('lets a project that may apply Namespaces make only those it names exactly', async () => {
    const g = guard([{ ...teams[0], kinds: { allow: ['Namespace'] } }]);
    const namespace = (name: string) =>
      g.objectsRefusalOf({
        entityRef: 'component:default/payments',
        appName: 'payments',
        objects: [{ kind: 'Namespace', metadata: { name } }],
      });
    await expect(namespace('payments')).resolves.toBeUndefined();
    await expect(namespace('kube-system')).resolves.toBe(
      "Namespace 'kube-system': namespace 'kube-system' is a system namespace Fleet does not deploy to",
    );
    for (const name of ['payments-blue', 'ledger']) {
      await expect(namespace(name)).resolves.toBe(
        `Namespace '${name}': project payments names no namespace '${name}' exactly, and a Namespace of the manifests must be one it names so (its namespaces: payments, payments-*, *)`,
      );
    }
  });

  it("holds the pods of the manifests to the project's pod security level", async () => {
    const privileged = workload({
      containers: [container({ securityContext: { privileged: true } })],
    });
    const builtIn = ProjectGuard.create({
      projects: [defaultProject('payments')],
      ownerOf: async () => ({}),
      deployNamespace: 'payments',
    });
    await expect(
      builtIn.objectsRefusalOf({
        entityRef: 'component:default/payments',
        appName: 'payments',
        objects: [privileged],
      }),
    ).resolves.toBe(
      "Deployment 'web' container 'web': privileged containers are not allowed by project default's pod security (baseline)",
    );
    // A configured project that names no level is at baseline too; a rule of the pod itself
    // names no container.
    await expect(
      refusal([
        workload(
          {
            hostPID: true,
            containers: [container({})],
          },
          'CronJob',
        ),
      ]),
    ).resolves.toBe(
      "CronJob 'web': sharing the host's namespaces (hostPID) is not allowed by project payments's pod security (baseline)",
    );
    const at = (podSecurity: string, objects: object[]) =>
      guard([{ ...teams[0], podSecurity }]).objectsRefusalOf({
        entityRef: 'component:default/payments',
        appName: 'payments',
        objects,
      });
    const plain = workload({ containers: [container({})] });
    await expect(at('baseline', [plain])).resolves.toBeUndefined();
    await expect(at('restricted', [plain])).resolves.toBe(
      "Deployment 'web' container 'web': securityContext.runAsNonRoot: true (on the container or the pod) is required by project payments's pod security (restricted)",
    );
    await expect(
      at('restricted', [
        workload({
          securityContext: {
            runAsNonRoot: true,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            container({
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
              },
            }),
          ],
        }),
      ]),
    ).resolves.toBeUndefined();
    await expect(
      at('privileged', [
        privileged,
        workload({
          hostNetwork: true,
          volumes: [{ name: 'root', hostPath: { path: '/' } }],
          containers: [container({})],
        }),
      ]),
    ).resolves.toBeUndefined();
  });

  it('refuses a Service with external IPs, which takes their traffic from the whole cluster', async () => {
    const service = (spec: JsonObject) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'payments' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80 }], ...spec },
    });
    await expect(refusal([service({})])).resolves.toBeUndefined();
    await expect(
      refusal([service({ externalIPs: ['10.96.0.10'] })]),
    ).resolves.toBe(
      "Service 'web': external IPs (10.96.0.10) would take the traffic for those addresses of every pod of the cluster: Fleet applies no Service with spec.externalIPs",
    );
  });
});
