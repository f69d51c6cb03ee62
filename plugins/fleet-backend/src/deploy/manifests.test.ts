import { buildManifests, serviceNameFor } from './manifests';

const base = {
  name: 'payments',
  entityRef: 'component:default/payments',
  namespace: 'apps',
  defaultReplicas: 3,
  serverVersion: 'v1.30.0',
};

describe('buildManifests', () => {
  it('builds an HA Deployment, a Service 80 -> 8000 and a PodDisruptionBudget by default', () => {
    const { deployment, service, podDisruptionBudget } = buildManifests({
      ...base,
      spec: { image: 'ghcr.io/acme/payments:1.0' },
    });
    const labels = {
      'app.kubernetes.io/name': 'payments',
      'app.kubernetes.io/managed-by': 'fleet',
      'backstage.io/kubernetes-id': 'payments',
    };
    const annotations = { 'cnp.io/entity-ref': 'component:default/payments' };
    for (const object of [deployment, service, podDisruptionBudget!]) {
      expect(object.metadata).toMatchObject({
        namespace: 'apps',
        labels,
        annotations,
      });
    }
    // The pods carry them too (the Kubernetes plugin lists pods by backstage.io/kubernetes-id),
    // but no selector does: a Deployment's selector cannot change once applied.
    // The pods also carry their track, which a Service may select (never the Deployment).
    expect(deployment.spec!.template.metadata).toEqual({
      labels: { ...labels, 'cnp.io/track': 'stable' },
      annotations,
    });
    expect(deployment.spec!.selector).toEqual({
      matchLabels: { 'app.kubernetes.io/name': 'payments' },
    });
    expect(deployment.spec!.replicas).toBe(3);
    const container = deployment.spec!.template.spec!.containers[0];
    expect(container).toMatchObject({
      image: 'ghcr.io/acme/payments:1.0',
      ports: [{ containerPort: 8000, name: 'http' }],
      readinessProbe: { httpGet: { path: '/health', port: 8000 } },
      livenessProbe: { httpGet: { path: '/health', port: 8000 } },
    });
    expect(deployment.spec!.template.spec!.topologySpreadConstraints).toEqual([
      expect.objectContaining({
        topologyKey: 'kubernetes.io/hostname',
        maxSkew: 1,
        whenUnsatisfiable: 'ScheduleAnyway',
      }),
      expect.objectContaining({
        topologyKey: 'topology.kubernetes.io/zone',
        maxSkew: 1,
        whenUnsatisfiable: 'ScheduleAnyway',
      }),
    ]);
    expect(container.lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
    expect(service.spec!.ports).toEqual([
      { name: 'http', port: 80, targetPort: 8000, protocol: 'TCP' },
    ]);
    expect(service.spec!.selector).toEqual({
      'app.kubernetes.io/name': 'payments',
    });
    expect(podDisruptionBudget!.spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'payments' } },
    });
  });

  it('lets one pod be evicted at a time whatever the count, and drops the PDB and spread for one replica', () => {
    for (const replicas of [2, 5, 10]) {
      const pdb = buildManifests({ ...base, spec: { image: 'x', replicas } })
        .podDisruptionBudget!;
      expect(pdb.spec!.maxUnavailable).toBe(1);
      expect(pdb.spec).not.toHaveProperty('minAvailable');
    }
    const single = buildManifests({
      ...base,
      spec: { image: 'x', replicas: 1 },
    });
    expect(single.podDisruptionBudget).toBeUndefined();
    expect(
      single.deployment.spec!.template.spec!.topologySpreadConstraints,
    ).toBeUndefined();
  });

  it('uses the spec port, env and resources', () => {
    const { deployment, service } = buildManifests({
      ...base,
      spec: {
        image: 'x',
        port: 9090,
        env: { B: '2', A: '1' },
        resources: { limits: { memory: '256Mi' } },
      },
    });
    const container = deployment.spec!.template.spec!.containers[0];
    expect(container.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
    // Memory is the application's; cpu, which it leaves out, takes Fleet's defaults.
    expect(container.resources).toEqual({
      requests: { cpu: '100m' },
      limits: { cpu: '200m', memory: '256Mi' },
    });
    expect(container.readinessProbe!.httpGet!.port).toBe(9090);
    expect(service.spec!.ports![0].targetPort).toBe(9090);
  });

  it('refuses a spec without an image and names Services so they start with a letter', () => {
    expect(() => buildManifests({ ...base, spec: {} })).toThrow(/no image/);
    expect(serviceNameFor('1password')).toMatch(/^svc-1password$/);
    expect(serviceNameFor('web')).toBe('web');
  });
});

describe('buildManifests and empty values', () => {
  it('leaves out empty env and resources, which an API server would drop', () => {
    const { deployment } = buildManifests({
      ...base,
      spec: { image: 'x', env: {}, resources: {} },
    });
    const container = deployment.spec!.template.spec!.containers[0];
    expect(container).not.toHaveProperty('env');
    expect(container).not.toHaveProperty('resources');
  });

  it("labels every object with the component's own name for the Kubernetes plugin, not the sanitized one", () => {
    const { deployment, service } = buildManifests({
      ...base,
      name: 'billing-api',
      entityRef: 'component:team-a/Billing_API',
      spec: { image: 'x' },
    });
    for (const labels of [
      deployment.metadata!.labels,
      deployment.spec!.template.metadata!.labels,
      service.metadata!.labels,
    ]) {
      expect(labels).toMatchObject({
        'app.kubernetes.io/name': 'billing-api',
        'backstage.io/kubernetes-id': 'Billing_API',
      });
    }
  });
});

describe('buildManifests for high availability', () => {
  const affinity = {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          {
            matchExpressions: [
              {
                key: 'kubernetes.io/hostname',
                operator: 'NotIn',
                values: ['bm-07', 'bm-12'],
              },
            ],
          },
        ],
      },
    },
  };
  const tolerations = [
    {
      key: 'dedicated',
      operator: 'Equal' as const,
      value: 'payments',
      effect: 'NoSchedule' as const,
    },
  ];

  it('passes affinity and tolerations to the pods as given', () => {
    const { deployment } = buildManifests({
      ...base,
      spec: { image: 'x', replicas: 5, affinity, tolerations },
    });
    expect(deployment.spec!.template.spec!.affinity).toEqual(affinity);
    expect(deployment.spec!.template.spec!.tolerations).toEqual(tolerations);
  });

  it('completes requests and limits from the defaults, per resource the application leaves out', () => {
    const defaults = {
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '500m', memory: '256Mi' },
    };
    const container = (resources?: Record<string, Record<string, string>>) =>
      buildManifests({
        ...base,
        defaultResources: defaults,
        spec: { image: 'x', resources },
      }).deployment.spec!.template.spec!.containers[0];
    expect(container().resources).toEqual(defaults);
    // memory named by the application (a limit only): none of the memory defaults is added.
    expect(container({ limits: { memory: '64Mi' } }).resources).toEqual({
      requests: { cpu: '100m' },
      limits: { cpu: '500m', memory: '64Mi' },
    });
    // The application's `resources: {}` opts out of the defaults.
    expect(container({})).not.toHaveProperty('resources');
  });

  it("gives a container Fleet's default requests and limits when neither the application nor the config names any", () => {
    const container = (resources?: Record<string, Record<string, string>>) =>
      buildManifests({ ...base, spec: { image: 'x', resources } }).deployment
        .spec!.template.spec!.containers[0];
    expect(container().resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '200m', memory: '256Mi' },
    });
    // The application's own win, per resource.
    expect(container({ limits: { cpu: '1' } }).resources).toEqual({
      requests: { memory: '128Mi' },
      limits: { cpu: '1', memory: '256Mi' },
    });
    // An explicit opt-out: no requests, no limits.
    expect(container({})).not.toHaveProperty('resources');
    // The config's defaults replace Fleet's; empty ones add nothing.
    expect(
      buildManifests({ ...base, defaultResources: {}, spec: { image: 'x' } })
        .deployment.spec!.template.spec!.containers[0],
    ).not.toHaveProperty('resources');
  });

  it('uses the sleep action on clusters at Kubernetes 1.30 or later, an exec of sleep below or when unknown', () => {
    const lifecycle = (serverVersion?: string) =>
      buildManifests({ ...base, serverVersion, spec: { image: 'x' } })
        .deployment.spec!.template.spec!.containers[0].lifecycle;
    const exec = { preStop: { exec: { command: ['sleep', '5'] } } };
    expect(lifecycle('v1.30.0')).toEqual({
      preStop: { sleep: { seconds: 5 } },
    });
    expect(lifecycle('v1.31.2+k3s1')).toEqual({
      preStop: { sleep: { seconds: 5 } },
    });
    expect(lifecycle('v2.0.0')).toEqual({ preStop: { sleep: { seconds: 5 } } });
    expect(lifecycle('v1.29.4-eks-1a2b3c')).toEqual(exec);
    expect(lifecycle('v1.9.0')).toEqual(exec);
    expect(lifecycle(undefined)).toEqual(exec);
  });

  it('makes the preStop sleep configurable, and leaves it out at zero', () => {
    const container = (preStopSleepSeconds: number) =>
      buildManifests({ ...base, preStopSleepSeconds, spec: { image: 'x' } })
        .deployment.spec!.template.spec!;
    expect(container(0).containers[0]).not.toHaveProperty('lifecycle');
    expect(container(10).containers[0].lifecycle).toEqual({
      preStop: { sleep: { seconds: 10 } },
    });
    expect(container(10)).not.toHaveProperty('terminationGracePeriodSeconds');
    expect(container(45).terminationGracePeriodSeconds).toBe(75);
  });

  it('adds an Ingress to the unchanged Service when the application asks', () => {
    const without = buildManifests({ ...base, spec: { image: 'x' } });
    expect(without.ingress).toBeUndefined();
    const { ingress, service } = buildManifests({
      ...base,
      spec: {
        image: 'x',
        ingress: { host: 'pay.example.com', className: 'nginx', tls: true },
      },
    });
    expect(service).toEqual(without.service);
    expect(ingress).toMatchObject({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: {
        name: 'payments',
        namespace: 'apps',
        labels: { 'app.kubernetes.io/managed-by': 'fleet' },
        annotations: { 'cnp.io/entity-ref': 'component:default/payments' },
      },
      spec: {
        ingressClassName: 'nginx',
        rules: [
          {
            host: 'pay.example.com',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: {
                    service: { name: 'payments', port: { number: 80 } },
                  },
                },
              ],
            },
          },
        ],
        tls: [{ hosts: ['pay.example.com'], secretName: 'payments-tls' }],
      },
    });
    const plain = buildManifests({
      ...base,
      spec: {
        image: 'x',
        ingress: {
          host: 'pay.example.com',
          path: '/api',
          tls: { secretName: 'wildcard' },
        },
      },
    }).ingress!;
    expect(plain.spec).not.toHaveProperty('ingressClassName');
    expect(plain.spec!.rules![0].http!.paths[0].path).toBe('/api');
    expect(plain.spec!.tls).toEqual([
      { hosts: ['pay.example.com'], secretName: 'wildcard' },
    ]);
  });
});
