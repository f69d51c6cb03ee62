import type { KubernetesObject } from '@kubernetes/client-node';
import type { FleetManifestSource } from '@cnp/plugin-fleet-node';
import { generatedWorkloadSource } from './generatedWorkload';
import {
  ManifestSourceError,
  ManifestSources,
  workloadFromObjects,
} from './manifestSources';
import { buildManifests } from './manifests';
import { OwnershipConflictError } from './ownership';

const target = {
  sourceId: 'repo',
  name: 'payments',
  entityRef: 'component:default/payments',
  namespace: 'apps',
};
const deployment = (extra: Record<string, unknown> = {}): KubernetesObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'payments' },
  ...extra,
});
const service: KubernetesObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'payments' },
};
const source = (
  id: string,
  applies: (entityRef: string) => boolean,
): FleetManifestSource => ({
  id,
  appliesTo: application => applies(application.entityRef),
  render: async () => [],
});
const application = {
  id: 'a1',
  entityRef: 'component:default/payments',
  name: 'payments',
  spec: {},
};

describe('ManifestSources', () => {
  const builtIn = generatedWorkloadSource({
    defaultReplicas: 1,
    progressDeadlineMs: 60_000,
  });

  it('gives the first added source that applies, else the generated workload', () => {
    const sources = ManifestSources.create({
      added: [
        source('never', () => false),
        source('first', () => true),
        source('second', () => true),
      ],
      builtIn,
    });
    expect(sources.sourceFor(application).id).toBe('first');
    expect(ManifestSources.create({ builtIn }).sourceFor(application).id).toBe(
      'generated',
    );
  });

  it('refuses two sources with one id', () => {
    expect(() =>
      ManifestSources.create({
        added: [source('generated', () => true)],
        builtIn,
      }),
    ).toThrow("Duplicate Fleet manifest source id 'generated'");
  });
});

describe('workloadFromObjects', () => {
  it("keeps Fleet's generated workload as it was built", async () => {
    const built = buildManifests({
      name: 'payments',
      entityRef: target.entityRef,
      namespace: 'apps',
      spec: { image: 'nginx:1', replicas: 3, ingress: { host: 'a.b' } },
      defaultReplicas: 1,
    });
    const rendered = await generatedWorkloadSource({
      defaultReplicas: 1,
      progressDeadlineMs: 60_000,
    }).render({
      application,
      spec: { image: 'nginx:1', replicas: 3, ingress: { host: 'a.b' } },
      cluster: { name: 'east' },
      namespace: 'apps',
    });
    const { progressDeadlineSeconds: _, ...spec } = workloadFromObjects(
      rendered,
      target,
    ).deployment.spec!;
    expect(spec).toEqual(built.deployment.spec);
    expect(workloadFromObjects(objectsOfBuilt(built), target)).toEqual(built);
  });

  it("adds Fleet's ownership marks and the namespace", () => {
    const workload = workloadFromObjects(
      [
        deployment({ metadata: { name: 'payments', labels: { a: 'b' } } }),
        service,
      ],
      target,
    );
    expect(workload.deployment.metadata).toEqual({
      name: 'payments',
      namespace: 'apps',
      labels: {
        a: 'b',
        'app.kubernetes.io/managed-by': 'fleet',
        'backstage.io/kubernetes-id': 'payments',
      },
      annotations: { 'cnp.io/entity-ref': 'component:default/payments' },
    });
    expect(workload.podDisruptionBudget).toBeUndefined();
  });

  it.each([
    [
      'another kind',
      [
        deployment(),
        service,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'payments' } },
      ],
      /rendered v1\/ConfigMap 'payments': Fleet applies only apps\/v1\/Deployment/,
    ],
    [
      'another name',
      [deployment({ metadata: { name: 'other' } }), service],
      /Deployment apps\/other: the application's Deployment must be named 'payments'/,
    ],
    [
      'another namespace',
      [deployment({ metadata: { name: 'payments', namespace: 'x' } }), service],
      /its objects go to namespace 'apps'/,
    ],
    ['no Service', [deployment()], /rendered no Service/],
    ['two Deployments', [deployment(), deployment(), service], /twice/],
  ])('refuses %s', (_, objects, message) => {
    expect(() =>
      workloadFromObjects(objects as KubernetesObject[], target),
    ).toThrow(ManifestSourceError);
    expect(() =>
      workloadFromObjects(objects as KubernetesObject[], target),
    ).toThrow(message);
  });

  it.each([
    [{ labels: { 'app.kubernetes.io/managed-by': 'helm' } }, /managed by helm/],
    [
      { annotations: { 'cnp.io/entity-ref': 'component:default/ledger' } },
      /for component:default\/ledger/,
    ],
  ])('refuses an object claiming another owner (%o)', (metadata, message) => {
    const run = () =>
      workloadFromObjects(
        [deployment({ metadata: { name: 'payments', ...metadata } }), service],
        target,
      );
    expect(run).toThrow(OwnershipConflictError);
    expect(run).toThrow(message);
  });
});

function objectsOfBuilt(built: ReturnType<typeof buildManifests>) {
  return [
    built.deployment,
    built.service,
    built.podDisruptionBudget!,
    built.ingress!,
  ];
}
