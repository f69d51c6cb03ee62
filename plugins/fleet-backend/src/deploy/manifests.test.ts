import { buildManifests, serviceNameFor } from './manifests';

const base = {
  name: 'payments',
  entityRef: 'component:default/payments',
  namespace: 'apps',
  defaultReplicas: 3,
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
    expect(deployment.spec!.template.metadata).toEqual({ labels, annotations });
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
      }),
    ]);
    expect(service.spec!.ports).toEqual([
      { name: 'http', port: 80, targetPort: 8000, protocol: 'TCP' },
    ]);
    expect(service.spec!.selector).toEqual({
      'app.kubernetes.io/name': 'payments',
    });
    expect(podDisruptionBudget!.spec!.minAvailable).toBe(2);
  });

  it('caps minAvailable at replicas - 1 and 2, and drops the PDB and spread for one replica', () => {
    expect(
      buildManifests({ ...base, spec: { image: 'x', replicas: 2 } })
        .podDisruptionBudget!.spec!.minAvailable,
    ).toBe(1);
    expect(
      buildManifests({ ...base, spec: { image: 'x', replicas: 10 } })
        .podDisruptionBudget!.spec!.minAvailable,
    ).toBe(2);
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
    expect(container.resources).toEqual({ limits: { memory: '256Mi' } });
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
