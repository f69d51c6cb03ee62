import { buildManifests } from '../deploy/manifests';
import { diffObject } from './drift';

const { deployment, service } = buildManifests({
  name: 'payments',
  entityRef: 'component:default/payments',
  namespace: 'default',
  spec: { image: 'ghcr.io/acme/payments:1.0', replicas: 3 },
  defaultReplicas: 3,
});

function clone<T>(value: T): any {
  return JSON.parse(JSON.stringify(value));
}

describe('diffObject', () => {
  it('finds nothing when the live object holds every desired field, whatever the server added', () => {
    const live = clone(deployment);
    live.metadata.uid = 'abc';
    live.metadata.annotations['deployment.kubernetes.io/revision'] = '1';
    live.spec.template.spec.containers[0].imagePullPolicy = 'IfNotPresent';
    live.spec.strategy = { type: 'RollingUpdate' };
    live.status = { availableReplicas: 3 };
    expect(diffObject(deployment, live)).toEqual([]);
  });

  it('lists a changed image by its JSON pointer', () => {
    const live = clone(deployment);
    live.spec.template.spec.containers[0].image = 'evil:latest';
    expect(diffObject(deployment, live)).toEqual([
      { kind: 'Deployment', name: 'payments', path: '/spec/template/spec/containers/0/image' },
    ]);
  });

  it('lists replicas, removed labels and changed ports, and honours ignored pointers', () => {
    const live = clone(deployment);
    live.spec.replicas = 7;
    delete live.metadata.labels['app.kubernetes.io/managed-by'];
    live.spec.template.spec.containers[0].ports = [];
    const all = diffObject(deployment, live).map(d => d.path);
    expect(all).toEqual([
      '/metadata/labels/app.kubernetes.io~1managed-by',
      '/spec/replicas',
      '/spec/template/spec/containers/0/ports',
    ]);
    expect(diffObject(deployment, live, ['/spec/replicas']).map(d => d.path)).not.toContain('/spec/replicas');
  });

  it('counts a missing object as one difference at /', () => {
    expect(diffObject(service, undefined)).toEqual([{ kind: 'Service', name: 'payments', path: '/' }]);
  });
});

describe('diffObject and omitted empties', () => {
  it('treats a missing list or map in the live object as equal to an empty desired one', () => {
    const desired = { kind: 'Deployment', metadata: { name: 'x', labels: {} }, spec: { template: { spec: { containers: [{ name: 'x', env: [] }] } } } };
    const live = { metadata: {}, spec: { template: { spec: { containers: [{ name: 'x' }] } } } };
    expect(diffObject(desired, live)).toEqual([]);
    const drifted = { metadata: {}, spec: { template: { spec: { containers: [{ name: 'x', env: [{ name: 'A', value: '1' }] }] } } } };
    // an explicit empty list that someone filled is a difference
    expect(diffObject(desired, drifted).map(d => d.path)).toEqual(['/spec/template/spec/containers/0/env']);
  });
});
