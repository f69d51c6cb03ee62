import { mannWhitneyU } from './mannWhitney';

// R's documentation example for wilcox.test (?wilcox.test, "Two-sample test", after Hollander &
// Wolfe (1973), p. 69f: permeability constants of the human chorioamnion at term, x, and between
// 12 and 26 weeks of gestational age, y). Published there: W = 35, and the exact one-sided
// p = 0.1272 of `wilcox.test(x, y, alternative = "g")`. No value ties, so sum(t^3 - t) = 0.
// The expected p-values of the normal approximation are computed by hand from the formula of
// `mannWhitneyU` (as R's wilcox.test computes it):
//   sigma = sqrt(10 * 5 / 12 * (15 + 1)) = sqrt(66.667) = 8.16497
//   two-sided, correct = TRUE:  z = (35 - 25 - 0.5) / 8.16497 = 1.16351, p = 2 (1 - Phi(z)) = 0.244624
//   greater,  correct = TRUE:  z = (35 - 25 - 0.5) / 8.16497,           p = 1 - Phi(z)     = 0.122312
//   greater,  correct = FALSE: z = (35 - 25) / 8.16497 = 1.22474,       p = 1 - Phi(z)     = 0.110336
// (the last is the "H&W large sample approximation" line of the same example). SciPy 1.17.1's
// mannwhitneyu(x, y, method='asymptotic') gives the same three values.
const x = [0.8, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
const y = [1.15, 0.88, 0.9, 0.74, 1.21];

// A textbook example with ties, from R's documentation of wilcox.test too (the formula
// interface: `wilcox.test(Ozone ~ Month, data = airquality, subset = Month %in% c(5, 8))`), whose
// published output, reproduced in many R tutorials, is "Wilcoxon rank sum test with continuity
// correction ... W = 127.5, p-value = 0.0001208": R falls back to the normal approximation with
// the continuity and tie corrections because Ozone ties (18, 23, 11, 14, 9, 44 and more). The
// data are R's `airquality` data set (New York, 1973), the non-missing Ozone readings of May and
// of August, in day order.
const may = [
  41, 36, 12, 18, 28, 23, 19, 8, 7, 16, 11, 14, 18, 14, 34, 6, 30, 11, 1, 11, 4,
  32, 23, 45, 115, 37,
];
const august = [
  39, 9, 16, 78, 35, 66, 122, 89, 110, 44, 28, 65, 22, 59, 23, 31, 44, 21, 9,
  45, 168, 73, 76, 118, 84, 85,
];

describe('mannWhitneyU', () => {
  it("gives R's W and normal-approximation p for the wilcox.test example", () => {
    const result = mannWhitneyU(x, y);
    expect(result.u).toBe(35);
    expect(result.z).toBeCloseTo(1.16351, 5);
    expect(result.p).toBeCloseTo(0.244624, 5);
  });

  it('gives the one-sided p-values, with and without the continuity correction', () => {
    expect(mannWhitneyU(x, y, { alternative: 'greater' }).p).toBeCloseTo(
      0.122312,
      5,
    );
    expect(
      mannWhitneyU(x, y, { alternative: 'greater', correct: false }).p,
    ).toBeCloseTo(0.110336, 5);
    expect(mannWhitneyU(x, y, { alternative: 'less' }).p).toBeCloseTo(
      0.900775,
      5,
    );
  });

  it("gives R's published W = 127.5, p = 0.0001208 for the tied ozone readings", () => {
    const result = mannWhitneyU(may, august);
    expect(result.u).toBe(127.5);
    expect(result.p.toPrecision(4)).toBe('0.0001208');
    // Without the tie correction the variance is larger and p too: the correction is applied.
    expect(result.p).toBeLessThan(0.000121);
  });

  it('is symmetric: U of y is n_x n_y - U of x, and the two-sided p is the same', () => {
    const forward = mannWhitneyU(may, august);
    const backward = mannWhitneyU(august, may);
    expect(backward.u).toBe(26 * 26 - 127.5);
    expect(backward.p).toBeCloseTo(forward.p, 12);
  });

  it('gives p = 1 where every value ties (R gives NaN)', () => {
    expect(mannWhitneyU([3, 3, 3], [3, 3])).toEqual({ u: 3, z: 0, p: 1 });
  });

  it('refuses an empty sample or a value that is not a finite number', () => {
    expect(() => mannWhitneyU([], [1])).toThrow(RangeError);
    expect(() => mannWhitneyU([1, NaN], [1])).toThrow(RangeError);
    expect(() => mannWhitneyU([1], [Infinity])).toThrow(RangeError);
  });

  it('does not reorder the samples it is given', () => {
    const a = [3, 1, 2];
    const b = [6, 4, 5];
    mannWhitneyU(a, b);
    expect(a).toEqual([3, 1, 2]);
    expect(b).toEqual([6, 4, 5]);
  });
});

describe('mannWhitneyU with a variance inflation', () => {
  it('divides z by the root of the inflation, and refuses one under 1', () => {
    const plain = mannWhitneyU(x, y, { correct: false });
    const wide = mannWhitneyU(x, y, { correct: false, varianceInflation: 4 });
    expect(wide.u).toBe(plain.u);
    expect(wide.z).toBeCloseTo(plain.z / 2, 12);
    expect(wide.p).toBeGreaterThan(plain.p);
    expect(() => mannWhitneyU(x, y, { varianceInflation: 0.5 })).toThrow(
      RangeError,
    );
  });
});
