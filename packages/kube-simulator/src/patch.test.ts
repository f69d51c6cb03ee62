import { ApiError } from './errors';
import {
  applyPatch,
  jsonPatch,
  mergePatch,
  PATCH_TYPES,
  strategicMerge,
} from './patch';

describe('JSON merge patch (RFC 7386)', () => {
  it('merges objects, replaces arrays and deletes with null', () => {
    expect(
      mergePatch({ a: 'b', c: { d: 'e', f: 'g' } }, { a: 'z', c: { f: null } }),
    ).toEqual({ a: 'z', c: { d: 'e' } });
    expect(mergePatch({ a: [1, 2] }, { a: [3] })).toEqual({ a: [3] });
    expect(mergePatch({ a: 'b' }, { a: { b: 'c' } })).toEqual({
      a: { b: 'c' },
    });
    expect(mergePatch({ e: null }, { a: 1 })).toEqual({ e: null, a: 1 });
  });

  it('rejects a patch that is not an object', () => {
    expect(() => applyPatch({}, PATCH_TYPES.merge, [1])).toThrow(ApiError);
  });
});

describe('strategic merge patch', () => {
  const pod = {
    spec: {
      containers: [
        {
          name: 'app',
          image: 'a:1',
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
          ports: [{ containerPort: 80 }],
        },
        { name: 'sidecar', image: 's:1' },
      ],
      tolerations: [{ key: 'x' }],
    },
    metadata: { finalizers: ['a'] },
  };

  it('merges containers by name, env by name and container ports by containerPort', () => {
    const out: any = strategicMerge(pod, {
      spec: {
        containers: [
          {
            name: 'app',
            image: 'a:2',
            env: [
              { name: 'B', value: '3' },
              { name: 'C', value: '4' },
            ],
            ports: [{ containerPort: 80, name: 'http' }],
          },
        ],
      },
    });
    expect(out.spec.containers).toHaveLength(2);
    expect(out.spec.containers[0]).toEqual({
      name: 'app',
      image: 'a:2',
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '3' },
        { name: 'C', value: '4' },
      ],
      ports: [{ containerPort: 80, name: 'http' }],
    });
    expect(out.spec.containers[1]).toEqual({ name: 'sidecar', image: 's:1' });
  });

  it('replaces lists without a merge key, unions finalizers, and honours directives', () => {
    const out: any = strategicMerge(pod, {
      $setElementOrder: [],
      spec: {
        tolerations: [{ key: 'y' }],
        containers: [{ name: 'sidecar', $patch: 'delete' }],
      },
      metadata: { finalizers: ['b'] },
    });
    expect(out.spec.tolerations).toEqual([{ key: 'y' }]);
    expect(out.spec.containers.map((c: any) => c.name)).toEqual(['app']);
    expect(out.metadata.finalizers).toEqual(['a', 'b']);
    expect(out.$setElementOrder).toBeUndefined();

    const replaced: any = strategicMerge(pod, {
      spec: {
        containers: [{ $patch: 'replace' }, { name: 'only', image: 'o:1' }],
      },
    });
    expect(replaced.spec.containers).toEqual([{ name: 'only', image: 'o:1' }]);
    const replacedMap: any = strategicMerge(pod, {
      spec: { $patch: 'replace', containers: [] },
    });
    expect(replacedMap.spec).toEqual({ containers: [] });
    const deleted: any = strategicMerge(pod, {
      metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] },
    });
    expect(deleted.metadata.finalizers).toEqual([]);
    const nulled: any = strategicMerge(pod, { spec: { tolerations: null } });
    expect(nulled.spec.tolerations).toBeUndefined();
  });

  it('merges Service ports by port', () => {
    const svc = {
      spec: {
        ports: [
          { name: 'http', port: 80, targetPort: 8000 },
          { name: 'm', port: 9090 },
        ],
      },
    };
    const out: any = strategicMerge(svc, {
      spec: { ports: [{ port: 80, targetPort: 8080 }] },
    });
    expect(out.spec.ports).toEqual([
      { name: 'http', port: 80, targetPort: 8080 },
      { name: 'm', port: 9090 },
    ]);
  });
});

describe('JSON patch (RFC 6902)', () => {
  const doc = { a: { b: [1, 2, 3], 'x/y': 1 }, c: 'd' };

  it('applies add, remove, replace, move, copy and test', () => {
    expect(
      jsonPatch(doc, [
        { op: 'add', path: '/a/b/-', value: 4 },
        { op: 'add', path: '/a/b/0', value: 0 },
        { op: 'remove', path: '/a/b/1' },
        { op: 'replace', path: '/c', value: 'e' },
        { op: 'move', from: '/a/x~1y', path: '/moved' },
        { op: 'copy', from: '/c', path: '/copied' },
        { op: 'test', path: '/copied', value: 'e' },
      ]),
    ).toEqual({ a: { b: [0, 2, 3, 4] }, c: 'e', moved: 1, copied: 'e' });
    expect(doc.a.b).toEqual([1, 2, 3]); // the input is not mutated
  });

  it('fails with 422 on a failed test or a missing path, 400 on a malformed operation', () => {
    const code = (ops: unknown[]) => {
      try {
        applyPatch(doc, PATCH_TYPES.json, ops);
      } catch (e) {
        return (e as ApiError).code;
      }
      return 200;
    };
    expect(code([{ op: 'test', path: '/c', value: 'x' }])).toBe(422);
    expect(code([{ op: 'replace', path: '/nope', value: 1 }])).toBe(422);
    expect(code([{ op: 'remove', path: '/a/b/7' }])).toBe(422);
    expect(code([{ op: 'frobnicate', path: '/c' }])).toBe(400);
    expect(code([{ path: '/c' }])).toBe(400);
  });
});
