import {
  canonicalQuantity,
  compareQuantities,
  parseQuantity,
  QuantityError,
} from './quantity';

const FORMAT_WRONG =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const NUMERIC = 'unable to parse numeric part of quantity';
const SUFFIX = "unable to parse quantity's suffix";

describe('canonicalQuantity', () => {
  // Expected values as kube-apiserver stores them; most come from the tests of
  // k8s.io/apimachinery/pkg/api/resource.
  it.each<[unknown, string]>([
    // DecimalSI
    ['0.5', '500m'],
    ['1000m', '1'],
    ['1.5', '1500m'],
    ['-1.5', '-1500m'],
    ['0.001', '1m'],
    ['1000k', '1M'],
    ['1000M', '1G'],
    ['100.5k', '100500'],
    ['10.5M', '10500k'],
    ['1.1E', '1100P'],
    ['12E', '12E'],
    ['1000n', '1u'],
    ['250m', '250m'],
    ['1024', '1024'],
    // BinarySI, falling back to decimal below 1024 or with a fraction
    ['1024Mi', '1Gi'],
    ['0.5Gi', '512Mi'],
    ['1536Mi', '1536Mi'],
    ['1.5Gi', '1536Mi'],
    ['2048Ki', '2Mi'],
    ['1023Ki', '1023Ki'],
    ['-1024Mi', '-1Gi'],
    ['1.5Ki', '1536'],
    ['0.5Ki', '512'],
    ['.001Ki', '1024m'],
    ['.000001Ki', '1024u'],
    ['100.035Ki', '102435840m'],
    ['0.05Gi', '53687091200m'],
    ['9Ei', '9223372036854775807'], // capped at 2^63-1
    // DecimalExponent
    ['1e3', '1e3'],
    ['1E6', '1E6'],
    ['1e1', '10'],
    ['1.2e3', '1200'],
    ['1.3E+6', '1300e3'],
    ['1e-10', '1e-9'],
    // finer than a nano rounds away from zero
    ['0.9n', '1n'],
    ['3.001n', '4n'],
    ['0.00000012345', '124n'],
    ['.000000000001Ki', '2n'],
    // zero
    ['0', '0'],
    ['0Ki', '0'],
    ['-0', '0'],
    ['0.000', '0'],
    // text the fast path finds canonical is kept as written
    ['+1Ki', '+1Ki'],
    ['1.500', '1.500'],
    ['100.035k', '100.035k'],
    // JSON values other than strings
    [2, '2'],
    [0.5, '500m'],
    [1000, '1k'],
    [-1, '-1'],
    [null, '0'],
    [' 1 ', '1'],
  ])('%j is stored as %j', (input, expected) => {
    expect(canonicalQuantity(input)).toBe(expected);
  });

  it.each<[unknown, string]>([
    ['', FORMAT_WRONG],
    ['abc', FORMAT_WRONG],
    ['1.1.M', FORMAT_WRONG],
    ['1+1.0M', FORMAT_WRONG],
    ['0.1am', FORMAT_WRONG],
    ['1KiB', FORMAT_WRONG],
    ['1 m', FORMAT_WRONG],
    ['0.1mi', SUFFIX],
    ['1ki', SUFFIX],
    ['.5i', SUFFIX],
    ['-3.01e-', SUFFIX],
    ['Pi', NUMERIC],
    [true, FORMAT_WRONG],
    [{ cpu: 1 }, FORMAT_WRONG],
  ])('%j is rejected', (input, message) => {
    expect(() => canonicalQuantity(input)).toThrow(new QuantityError(message));
  });
});

describe('compareQuantities', () => {
  const cmp = (a: string, b: string) =>
    compareQuantities(parseQuantity(a), parseQuantity(b));

  it('compares by value, whatever the suffix', () => {
    expect(cmp('0.5', '500m')).toBe(0);
    expect(cmp('1Gi', '1024Mi')).toBe(0);
    expect(cmp('1k', '1000')).toBe(0);
    expect(cmp('1', '2')).toBe(-1);
    expect(cmp('100m', '50m')).toBe(1);
    expect(cmp('10000T', '100Gi')).toBe(1);
    expect(cmp('-1', '1m')).toBe(-1);
    expect(cmp('-2', '-1')).toBe(-1);
    expect(cmp('1e100', '1E')).toBe(1);
    expect(cmp('0', '-0')).toBe(0);
  });
});
