import { COMPARE_DIRECTIONS } from '@cnp/plugin-fleet-common';
import { z } from 'zod';
import { DEFAULT_JUDGE } from './judgment';

/**
 * A template's `compare`: its metric judged on the canary against a baseline of the stable
 * version with the Mann-Whitney U test, rather than a threshold on the canary alone.
 */
export const compareSchema = z
  .object({
    baseline: z.literal(true, {
      errorMap: () => ({ message: 'must be true: compare with a baseline' }),
    }),
    direction: z.enum(COMPARE_DIRECTIONS),
    alpha: z
      .number()
      .gt(0, 'must be above 0 and at most 0.5')
      .max(0.5, 'must be above 0 and at most 0.5')
      .optional(),
    minSamples: z.number().int().min(3).max(10_000).optional(),
  })
  .strict();

/** The score a step goes on at, and the one under which it fails, 0–100 each. */
export const judgeSchema = z
  .object({
    pass: z.number().min(0).max(100).optional(),
    marginal: z.number().min(0).max(100).optional(),
  })
  .strict()
  .superRefine((judge, ctx) => {
    // JSON Schema cannot compare two fields: the spec states the rule, this checks it.
    const pass = judge.pass ?? DEFAULT_JUDGE.pass;
    const marginal = judge.marginal ?? DEFAULT_JUDGE.marginal;
    if (marginal > pass) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['marginal'],
        message: `must be at most pass: ${marginal} is above ${pass}`,
      });
    }
  });

/** The placeholder a compared template's query must use: `canary` or `baseline` in turn. */
export const VARIANT_PLACEHOLDER = '{{variant}}';

/**
 * Checks a template names one way to judge it: a `successCondition` (a threshold on the canary)
 * or `compare` (against a baseline), and that a compared Prometheus query uses `{{variant}}`,
 * without which the canary and the baseline would read the same series. A compared template
 * names the prometheus provider.
 */
export function checkJudgedTemplate(
  template: {
    successCondition?: string;
    compare?: unknown;
    provider?: { prometheus?: { query: string } };
  },
  ctx: z.RefinementCtx,
): void {
  const both = template.successCondition !== undefined && template.compare;
  if (both || (template.successCondition === undefined && !template.compare)) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: [both ? 'compare' : 'successCondition'],
      message:
        'give either a successCondition (a threshold on the canary) or compare (against a baseline), not both',
    });
  }
  // The baseline is read through Prometheus's query_range: a provider a module added has no
  // way yet to read two variants, and might evaluate the template as a threshold of nothing.
  if (template.compare && template.provider && !template.provider.prometheus) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ['compare'],
      message: 'is measured through the prometheus provider only',
    });
  }
  const query = template.provider?.prometheus?.query;
  if (
    template.compare &&
    query !== undefined &&
    !query.includes(VARIANT_PLACEHOLDER)
  ) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ['provider', 'prometheus', 'query'],
      message: `must use ${VARIANT_PLACEHOLDER} (canary or baseline) when the template has compare`,
    });
  }
}
