import { buildManifests } from '../deploy/manifests';
import { diffObject } from './diffObject';

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
      {
        kind: 'Deployment',
        name: 'payments',
        path: '/spec/template/spec/containers/0/image',
      },
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
      '/spec/template/spec/containers/0/ports/0',
    ]);
    expect(
      diffObject(deployment, live, ['/spec/replicas']).map(d => d.path),
    ).not.toContain('/spec/replicas');
  });

  it('counts a missing object as one difference at /', () => {
    expect(diffObject(service, undefined)).toEqual([
      { kind: 'Service', name: 'payments', path: '/' },
    ]);
  });
});

describe('diffObject and omitted empties', () => {
  it('treats a missing list or map in the live object as equal to an empty desired one', () => {
    const desired = {
      kind: 'Deployment',
      metadata: { name: 'x', labels: {} },
      spec: { template: { spec: { containers: [{ name: 'x', env: [] }] } } },
    };
    const live = {
      metadata: {},
      spec: { template: { spec: { containers: [{ name: 'x' }] } } },
    };
    expect(diffObject(desired, live)).toEqual([]);
    const drifted = {
      metadata: {},
      spec: {
        template: {
          spec: {
            containers: [{ name: 'x', env: [{ name: 'A', value: '1' }] }],
          },
        },
      },
    };
    // env is keyed by name: items someone else added are theirs, not drift
    expect(diffObject(desired, drifted)).toEqual([]);
    // an atomic list is compared whole: someone filling an empty one is drift
    const atomic = {
      kind: 'Deployment',
      metadata: { name: 'x' },
      spec: { template: { spec: { tolerations: [] } } },
    };
    expect(
      diffObject(atomic, {
        spec: { template: { spec: { tolerations: [{ key: 'k' }] } } },
      }).map(d => d.path),
    ).toEqual(['/spec/template/spec/tolerations']);
  });
});

describe('diffObject and other managers', () => {
  it('ignores an injected sidecar and extra keyed items in any order, and finds a changed or missing item of Fleet', () => {
    const live = clone(deployment);
    const pod = live.spec.template.spec;
    pod.containers.unshift({ name: 'istio-proxy', image: 'proxy:1' });
    pod.topologySpreadConstraints = [
      ...(pod.topologySpreadConstraints ?? []).reverse(),
      { topologyKey: 'rack', whenUnsatisfiable: 'DoNotSchedule', maxSkew: 1 },
    ];
    expect(diffObject(deployment, live)).toEqual([]);
    pod.containers[1].image = 'evil:latest';
    pod.topologySpreadConstraints = pod.topologySpreadConstraints.slice(1);
    expect(diffObject(deployment, live).map(d => d.path)).toEqual([
      '/spec/template/spec/containers/0/image',
      '/spec/template/spec/topologySpreadConstraints/1',
    ]);
  });
});

describe('diffObject and resource quantities', () => {
  const sized = (resources: unknown) => ({
    kind: 'Deployment',
    metadata: { name: 'x', labels: { app: 'x' } },
    spec: { template: { spec: { containers: [{ name: 'x', resources }] } } },
  });

  it('compares requests and limits by value, as the API server stores them in canonical form', () => {
    const desired = sized({
      requests: { cpu: '0.5', memory: '1Gi' },
      limits: { cpu: 2, memory: '0.5Gi', 'nvidia.com/gpu': '1' },
    });
    const live = sized({
      requests: { cpu: '500m', memory: '1024Mi' },
      limits: { cpu: '2', memory: '512Mi', 'nvidia.com/gpu': '1' },
    });
    expect(diffObject(desired, live)).toEqual([]);
    expect(
      diffObject(
        sized({ requests: { cpu: '1.5', memory: '1000k' } }),
        sized({ requests: { cpu: '1500m', memory: '1M' } }),
      ),
    ).toEqual([]);
  });

  it('still finds a different value, and compares what is not a quantity as text', () => {
    const path = '/spec/template/spec/containers/0/resources/requests/cpu';
    expect(
      diffObject(
        sized({ requests: { cpu: '1' } }),
        sized({ requests: { cpu: '2' } }),
      ).map(d => d.path),
    ).toEqual([path]);
    expect(
      diffObject(
        sized({ requests: { cpu: '1Gi' } }),
        sized({ requests: { cpu: '1G' } }),
      ).map(d => d.path),
    ).toEqual([path]);
    expect(
      diffObject(
        sized({ requests: { cpu: 'lots' } }),
        sized({ requests: { cpu: 'lots' } }),
      ),
    ).toEqual([]);
    expect(
      diffObject(
        sized({ requests: { cpu: 'lots' } }),
        sized({ requests: { cpu: '1' } }),
      ).map(d => d.path),
    ).toEqual([path]);
    expect(
      diffObject(sized({ requests: { cpu: '1' } }), sized({})).map(d => d.path),
    ).toEqual(['/spec/template/spec/containers/0/resources/requests']);
  });

  it('compares by value only under resources/requests and resources/limits', () => {
    const desired = {
      kind: 'Deployment',
      metadata: { name: 'x', labels: { size: '0.5' } },
      spec: {},
    };
    const live = { metadata: { labels: { size: '500m' } }, spec: {} };
    expect(diffObject(desired, live).map(d => d.path)).toEqual([
      '/metadata/labels/size',
    ]);
  });
});
