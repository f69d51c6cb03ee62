import { z } from 'zod';

/**
 * Kubernetes' rules between a selector requirement's operator and its values (In and NotIn need
 * values, Exists and DoesNotExist take none, Gt and Lt one integer): rules between fields.
 */
const selectorRequirement = z
  .object({ operator: z.string(), values: z.array(z.string()).optional() })
  .passthrough()
  .superRefine((r, ctx) => {
    const count = r.values?.length ?? 0;
    if ((r.operator === 'In' || r.operator === 'NotIn') && count === 0)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['values'],
        message: `${r.operator} needs at least one value`,
      });
    if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && count)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['values'],
        message: `${r.operator} takes no values`,
      });
    if (
      (r.operator === 'Gt' || r.operator === 'Lt') &&
      (count !== 1 || !/^-?\d+$/.test(r.values![0]))
    )
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['values'],
        message: `${r.operator} needs exactly one integer value`,
      });
  });

/** A node selector term needs matchExpressions or matchFields: a rule between fields. */
const nodeSelectorTerm = z
  .object({
    matchExpressions: z.array(selectorRequirement).optional(),
    matchFields: z.array(selectorRequirement).optional(),
  })
  .passthrough()
  .refine(
    t => (t.matchExpressions?.length ?? 0) + (t.matchFields?.length ?? 0) > 0,
    'a node selector term needs matchExpressions or matchFields',
  );

const podAffinityTerm = z
  .object({
    labelSelector: z
      .object({ matchExpressions: z.array(selectorRequirement).optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();

const podAffinity = z
  .object({
    requiredDuringSchedulingIgnoredDuringExecution: z
      .array(podAffinityTerm)
      .optional(),
    preferredDuringSchedulingIgnoredDuringExecution: z
      .array(z.object({ podAffinityTerm }).passthrough())
      .optional(),
  })
  .passthrough();

/** Kubernetes `affinity`: its selector requirements' operator and values rules. */
export const affinitySchema: z.ZodTypeAny = z
  .object({
    nodeAffinity: z
      .object({
        requiredDuringSchedulingIgnoredDuringExecution: z
          .object({ nodeSelectorTerms: z.array(nodeSelectorTerm) })
          .passthrough()
          .optional(),
        preferredDuringSchedulingIgnoredDuringExecution: z
          .array(z.object({ preference: nodeSelectorTerm }).passthrough())
          .optional(),
      })
      .passthrough()
      .optional(),
    podAffinity: podAffinity.optional(),
    podAntiAffinity: podAffinity.optional(),
  })
  .passthrough();

/**
 * A Kubernetes toleration, with the API server's rules between operator, key, value and effect:
 * rules between fields.
 */
export const tolerationSchema = z
  .object({
    key: z.string().optional(),
    operator: z.string().optional(),
    value: z.string().optional(),
    effect: z.string().optional(),
    tolerationSeconds: z.number().optional(),
  })
  .passthrough()
  .superRefine((t, ctx) => {
    if (!t.key && t.operator !== 'Exists')
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['operator'],
        message: "must be 'Exists' when key is empty (to tolerate every taint)",
      });
    if (t.operator === 'Exists' && t.value)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['value'],
        message: "must be empty when operator is 'Exists'",
      });
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute')
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['tolerationSeconds'],
        message: "is only allowed with effect 'NoExecute'",
      });
  });
