import { changedPaths } from './changedPaths';

describe('changedPaths', () => {
  const live = {
    metadata: {
      name: 'web',
      resourceVersion: '7',
      generation: 3,
      annotations: { 'example.com/a~b': 'x', 'example.com/gone': 'y' },
      managedFields: [{ manager: 'fleet' }],
    },
    spec: {
      replicas: 2,
      template: {
        spec: {
          containers: [{ name: 'web', image: 'nginx:1.27', ports: [] }],
          tolerations: [{ key: 'a' }],
        },
      },
    },
    status: { replicas: 2 },
  };

  it('answers nothing for an unchanged object, whatever the bookkeeping says', () => {
    expect(
      changedPaths(
        {
          ...live,
          metadata: {
            ...live.metadata,
            resourceVersion: '8',
            generation: 4,
            managedFields: [],
          },
          status: { replicas: 3 },
        },
        live,
      ),
    ).toEqual([]);
  });

  it('answers the fields set, changed and removed, as escaped JSON pointers', () => {
    const after = {
      ...live,
      metadata: {
        ...live.metadata,
        annotations: { 'example.com/a~b': 'z' },
        labels: { app: 'web' },
      },
      spec: {
        replicas: 3,
        template: {
          spec: {
            containers: [{ name: 'web', image: 'nginx:1.28', ports: [] }],
            tolerations: [{ key: 'a' }, { key: 'b' }],
          },
        },
      },
    };
    expect(changedPaths(after, live).sort()).toEqual([
      '/metadata/annotations/example.com~1a~0b',
      '/metadata/annotations/example.com~1gone',
      '/metadata/labels',
      '/spec/replicas',
      '/spec/template/spec/containers/0/image',
      '/spec/template/spec/tolerations',
    ]);
  });
});
