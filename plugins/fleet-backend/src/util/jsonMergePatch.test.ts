import fc from 'fast-check';
import { jsonMergePatch } from './jsonMergePatch';

describe('jsonMergePatch', () => {
  // The examples of RFC 7386, appendix A.
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('patches %j with %j into %j', (target, patch, expected) => {
    expect(jsonMergePatch(target, patch)).toEqual(expected);
  });

  it('changes neither its target nor its patch', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (target, patch) => {
        const before = JSON.stringify([target, patch]);
        jsonMergePatch(target, patch);
        expect(JSON.stringify([target, patch])).toBe(before);
      }),
    );
  });

  it('is idempotent: a patch applied twice gives what it gives once', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (target, patch) => {
        const once = jsonMergePatch(target, patch);
        expect(jsonMergePatch(once, patch)).toEqual(once);
      }),
    );
  });
});
