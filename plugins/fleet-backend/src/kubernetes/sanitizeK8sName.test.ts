import fc from 'fast-check';
import { isDns1123Label, sanitizeK8sName } from './sanitizeK8sName';

const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const anyText = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 100 }),
  fc.stringMatching(/^[A-Za-z0-9_.\- ]{0,150}$/),
);
const validName = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);

describe('sanitizeK8sName', () => {
  it('always gives a DNS-1123 label of at most 63 characters, never empty', () => {
    fc.assert(
      fc.property(anyText, input => {
        const name = sanitizeK8sName(input);
        expect(name).toMatch(DNS1123);
        expect(name.length).toBeGreaterThan(0);
        expect(name.length).toBeLessThanOrEqual(63);
      }),
      { numRuns: 2000 },
    );
  });

  it('is stable: the same input always gives the same name, and sanitizing twice changes nothing', () => {
    fc.assert(
      fc.property(anyText, input => {
        const name = sanitizeK8sName(input);
        expect(sanitizeK8sName(input)).toBe(name);
        expect(sanitizeK8sName(name)).toBe(name);
      }),
    );
  });

  it('maps an already valid name to itself', () => {
    fc.assert(
      fc.property(validName, name => {
        expect(isDns1123Label(name)).toBe(true);
        expect(sanitizeK8sName(name)).toBe(name);
      }),
    );
  });

  it('gives different names to two different long inputs sharing a 63-character prefix', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9][a-z0-9-]{62}$/),
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.string({ minLength: 1, maxLength: 40 }),
        (prefix, a, b) => {
          fc.pre(a !== b);
          expect(sanitizeK8sName(prefix + a)).not.toBe(
            sanitizeK8sName(prefix + b),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('handles the cases people actually type', () => {
    expect(sanitizeK8sName('Payments_API')).toBe('payments-api');
    expect(sanitizeK8sName('--web--')).toBe('web');
    expect(sanitizeK8sName('')).toMatch(/^x-[0-9a-f]{8}$/);
    expect(sanitizeK8sName('???')).toMatch(/^x-[0-9a-f]{8}$/);
    expect(sanitizeK8sName('a'.repeat(80))).toMatch(/^a{54}-[0-9a-f]{8}$/);
  });
});
