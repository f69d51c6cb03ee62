import { InputError, NotFoundError } from '@backstage/errors';
import { CLUSTER_STATUSES } from '@cnp/plugin-fleet-common';
import { z } from 'zod';
import { IMAGE_REFERENCE } from '../kubernetes/imageReference';
import { parseLabelSelector } from '../kubernetes/labelSelector';
import { strategySchema } from '../progressive/strategy';
import { pageQueryShape } from './paging';

const dns1123Label = z
  .string()
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters')
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    "must be a DNS-1123 label: lower case letters, digits and '-', starting and ending with a letter or digit",
  );

const labelKey = z
  .string()
  .max(253)
  .regex(
    /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/,
    'label keys look like env or example.com/tier',
  );
const labelValue = z
  .string()
  .max(63)
  .regex(
    /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/,
    'label values are at most 63 letters, digits, -, _ or .',
  );

export const labelsSchema = z
  .record(labelKey, labelValue)
  .refine(labels => Object.keys(labels).length <= 64, 'at most 64 labels');

// eslint-disable-next-line no-control-regex
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]*$/;

/**
 * Characters that change how text around them is shown without being seen: bidirectional
 * controls (U+202E turns `moc.evil` into `live.com`), zero-width characters and the other
 * Unicode format characters, line and paragraph separators, C1 controls.
 */
const INVISIBLE_CHARACTERS = /[\p{Cf}\p{Zl}\p{Zp}\u0080-\u009f]/u;
const NO_INVISIBLE_MESSAGE =
  'must not contain invisible or bidirectional control characters (such as U+202E or U+200B)';
const visibleText = (value: string) => !INVISIBLE_CHARACTERS.test(value);

const endpoint = z
  .string()
  .max(2048)
  // new URL() percent-encodes a NUL in a path, but the raw text is what would be stored.
  .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters')
  .refine(visibleText, NO_INVISIBLE_MESSAGE)
  // One spelling per server: an internationalized host in its xn-- form, a path percent-encoded
  // (a look-alike letter from another script would name another host that reads the same).
  .refine(
    value => /^[\x21-\x7e]*$/.test(value),
    'must be ASCII: write an internationalized host name in its xn-- form and percent-encode the path',
  )
  .refine(value => {
    try {
      const url = new URL(value);
      return (
        (url.protocol === 'https:' || url.protocol === 'http:') &&
        !!url.hostname
      );
    } catch {
      return false;
    }
  }, 'must be an http(s) URL such as https://10.0.0.1:6443')
  // new URL() accepts (and encodes) spaces and Markdown after the host; the raw text is what
  // would be stored and shown, in the catalog too.
  .refine(value => !/\s/.test(value), 'must not contain whitespace')
  .refine(value => {
    try {
      const url = new URL(value);
      return !url.username && !url.password;
    } catch {
      return true;
    }
  }, 'must not contain credentials (user:password@)')
  .refine(
    // An IPv6 host is the one place a URL has brackets.
    value =>
      !/[<>`"'[\]{}|\\^]/.test(
        value.replace(/^(https?:\/\/)\[[0-9a-f:.]+\]/i, '$1host'),
      ),
    'must be a plain URL without quotes, brackets or other markup',
  );

/** One line of printable text: no control characters, so it cannot forge log lines. */
const singleLine = (max: number) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .regex(
      NO_CONTROL_CHARACTERS,
      'must be one line without control characters',
    );

export const createClusterSchema = z
  .object({
    name: dns1123Label,
    endpoint,
    /**
     * A path inside the allowed kubeconfig directories, or an opaque reference (e.g. a Secret
     * name) that Fleet stores and never opens. Never the kubeconfig itself.
     */
    kubeconfigRef: singleLine(1024)
      .refine(visibleText, NO_INVISIBLE_MESSAGE)
      .refine(
        ref =>
          !/apiVersion|current-context|certificate-authority-data|client-(key|certificate)-data|-----BEGIN/i.test(
            ref,
          ),
        'give a reference to a kubeconfig (a file path or a Secret name), not its contents',
      ),
    context: singleLine(253)
      .refine(visibleText, NO_INVISIBLE_MESSAGE)
      .optional(),
    labels: labelsSchema.optional(),
  })
  .strict();

export const patchClusterSchema = z
  .object({
    labels: labelsSchema.optional(),
    failureThreshold: z.number().int().min(1).max(100).nullable().optional(),
  })
  .strict()
  .refine(
    body => body.labels !== undefined || body.failureThreshold !== undefined,
    'give labels and/or failureThreshold',
  );

export const clusterListQuerySchema = z.object({
  status: z.enum(CLUSTER_STATUSES).optional(),
  ...pageQueryShape(),
});

export const clusterNameSchema = dns1123Label;

/** Parses `value` or throws an InputError (400) that says what is wrong. */
export function parseOrThrow<T>(
  schema: z.ZodType<T, z.ZodTypeDef, unknown>,
  value: unknown,
  what: string,
): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const details = parsed.error.issues
      .map(
        issue =>
          `${issue.path.length ? issue.path.join('.') : what}: ${
            issue.message
          }`,
      )
      .join('; ');
    throw new InputError(`Invalid ${what}: ${details}`);
  }
  return parsed.data;
}

/**
 * A path parameter naming a resource (`/clusters/:name`, `/deployments/:id/…`): one that cannot
 * name anything (not a DNS-1123 label, not an id the API hands out) is answered 404, like one
 * that names nothing.
 */
export function parsePathNameOr404<T>(
  schema: z.ZodType<T>,
  value: string,
  what: string,
): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const shown = value.length > 100 ? `${value.slice(0, 100)}…` : value;
    throw new NotFoundError(`${what} '${shown}' not found`);
  }
  return parsed.data;
}

const entityRef = z.string().trim().min(1).max(255);

const envName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*$/,
    'environment variable names look like LOG_LEVEL',
  )
  .max(128);
/** A key of a Secret or ConfigMap on the target cluster: never its value. */
const keyRef = z
  .object({
    name: z
      .string()
      .max(253)
      .regex(
        /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
        'must be a Secret or ConfigMap name (DNS-1123 subdomain)',
      ),
    key: z
      .string()
      .max(253)
      .regex(/^[-._a-zA-Z0-9]+$/, "keys are letters, digits, '-', '_' or '.'"),
    optional: z.boolean().optional(),
  })
  .strict();

/** An environment value: text, or a reference to a Secret's or ConfigMap's key on the cluster. */
const envValue = z.union([
  z.string().max(4096),
  z
    .object({
      valueFrom: z.union([
        z.object({ secretKeyRef: keyRef }).strict(),
        z.object({ configMapKeyRef: keyRef }).strict(),
      ]),
    })
    .strict(),
]);

const quantity = z
  .string()
  .regex(
    /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/,
    'a Kubernetes quantity such as 250m or 512Mi',
  );

const dns1123Subdomain = z
  .string()
  .min(1, 'must not be empty')
  .max(253, 'must be at most 253 characters')
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
    "must be a DNS-1123 subdomain such as web.example.com: lower case letters, digits, '-' and '.'",
  );

/** A node or pod selector requirement, with Kubernetes' rules on operators and values. */
const selectorRequirement = (operators: readonly [string, ...string[]]) =>
  z
    .object({
      key: labelKey,
      operator: z.enum(operators as [string, ...string[]]),
      values: z.array(labelValue).max(64).optional(),
    })
    .strict()
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

const NODE_OPERATORS = [
  'In',
  'NotIn',
  'Exists',
  'DoesNotExist',
  'Gt',
  'Lt',
] as const;
const POD_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

const nodeSelectorTerm = z
  .object({
    matchExpressions: z
      .array(selectorRequirement(NODE_OPERATORS))
      .max(32)
      .optional(),
    matchFields: z
      .array(
        selectorRequirement(['In', 'NotIn']).refine(
          r => r.key === 'metadata.name',
          {
            message:
              "the only field a node can be matched by is 'metadata.name'",
            path: ['key'],
          },
        ),
      )
      .max(8)
      .optional(),
  })
  .strict()
  .refine(
    t => (t.matchExpressions?.length ?? 0) + (t.matchFields?.length ?? 0) > 0,
    'a node selector term needs matchExpressions or matchFields',
  );

const weight = z
  .number()
  .int()
  .min(1, 'must be 1 to 100')
  .max(100, 'must be 1 to 100');

const podAffinityTerm = z
  .object({
    labelSelector: z
      .object({
        matchLabels: labelsSchema.optional(),
        matchExpressions: z
          .array(selectorRequirement(POD_OPERATORS))
          .max(32)
          .optional(),
      })
      .strict()
      .optional(),
    namespaces: z.array(dns1123Label).max(64).optional(),
    topologyKey: labelKey,
  })
  .strict();

const podAffinity = z
  .object({
    requiredDuringSchedulingIgnoredDuringExecution: z
      .array(podAffinityTerm)
      .max(16)
      .optional(),
    preferredDuringSchedulingIgnoredDuringExecution: z
      .array(z.object({ weight, podAffinityTerm }).strict())
      .max(16)
      .optional(),
  })
  .strict();

/** Kubernetes `affinity`, checked field by field: a mistake is a 400 naming the field. */
export const affinitySchema = z
  .object({
    nodeAffinity: z
      .object({
        requiredDuringSchedulingIgnoredDuringExecution: z
          .object({
            nodeSelectorTerms: z.array(nodeSelectorTerm).min(1).max(16),
          })
          .strict()
          .optional(),
        preferredDuringSchedulingIgnoredDuringExecution: z
          .array(z.object({ weight, preference: nodeSelectorTerm }).strict())
          .max(16)
          .optional(),
      })
      .strict()
      .optional(),
    podAffinity: podAffinity.optional(),
    podAntiAffinity: podAffinity.optional(),
  })
  .strict();

/** A Kubernetes toleration, with the API server's rules on operator, value and effect. */
export const tolerationSchema = z
  .object({
    key: labelKey.optional(),
    operator: z.enum(['Equal', 'Exists']).optional(),
    value: labelValue.optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().min(0).max(31_536_000).optional(),
  })
  .strict()
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

/** An Ingress in front of the application's Service. */
export const ingressSchema = z
  .object({
    host: z
      .string()
      .max(253)
      .refine(
        host =>
          /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(
            host,
          ),
        'must be a host name such as web.example.com (a leading *. is allowed)',
      ),
    className: dns1123Subdomain.optional(),
    path: z
      .string()
      .max(1024)
      .regex(/^\/[^\s{};]*$/, "must be an absolute path such as '/' or '/api'")
      .optional(),
    tls: z
      .union([z.boolean(), z.object({ secretName: dns1123Subdomain }).strict()])
      .optional(),
  })
  .strict();

export const applicationSpecSchema = z
  .object({
    image: z
      .string()
      .min(1)
      .max(IMAGE_REFERENCE.maxLength)
      .regex(IMAGE_REFERENCE.pattern, IMAGE_REFERENCE.hint)
      .optional(),
    replicas: z.number().int().min(0).max(1000).optional(),
    port: z.number().int().min(1).max(65535).optional(),
    env: z
      .record(envName, envValue)
      .refine(
        env => Object.keys(env).length <= 100,
        'at most 100 environment variables',
      )
      .optional(),
    resources: z
      .object({
        requests: z
          .object({ cpu: quantity.optional(), memory: quantity.optional() })
          .strict()
          .optional(),
        limits: z
          .object({ cpu: quantity.optional(), memory: quantity.optional() })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    ignoreDifferences: z.array(z.string().max(256)).max(50).optional(),
    selfHeal: z.boolean().optional(),
    autoRollback: z.boolean().optional(),
    namespace: dns1123Label.optional(),
    affinity: affinitySchema.optional(),
    tolerations: z.array(tolerationSchema).max(32).optional(),
    ingress: ingressSchema.optional(),
  })
  .strict();

const structuredSelectorSchema = z
  .object({
    matchLabels: labelsSchema.optional(),
    matchExpressions: z
      .array(
        z
          .object({
            key: labelKey,
            operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
            values: z.array(labelValue).max(64).optional(),
          })
          .strict()
          .refine(
            e =>
              e.operator === 'In' || e.operator === 'NotIn'
                ? (e.values?.length ?? 0) > 0
                : e.values === undefined || e.values.length === 0,
            'In and NotIn need values; Exists and DoesNotExist take none',
          ),
      )
      .max(32)
      .optional(),
  })
  .strict();

/**
 * A label map (`{ env: 'prod' }`), set-based requirements (`{ matchLabels, matchExpressions }`),
 * or their text form (`env=prod,tier=web`, `env in (prod,staging)`, `env!=dev`, `!canary`).
 */
const clusterSelectorSchema = z
  .union([structuredSelectorSchema, labelsSchema, z.string().max(1024)])
  .transform((value, ctx) => {
    if (typeof value !== 'string') return value;
    const parsed = z
      .union([structuredSelectorSchema, labelsSchema])
      .safeParse(parseLabelSelector(value));
    if (!parsed.success) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message:
          "must be a label map or a selector such as 'env=prod,tier=web', 'env in (prod,staging)', 'env!=dev' or '!canary'",
      });
      return z.NEVER;
    }
    return parsed.data;
  });

export const placementSchema = z
  .object({
    clusters: z.array(dns1123Label).max(500).optional(),
    clusterSelector: clusterSelectorSchema.optional(),
    prune: z.boolean().optional(),
    overrides: z
      .array(
        z
          .object({
            clusters: z.array(dns1123Label).max(500).optional(),
            clusterSelector: clusterSelectorSchema.optional(),
            replicas: applicationSpecSchema.shape.replicas,
            env: applicationSpecSchema.shape.env,
          })
          .strict(),
      )
      .max(50)
      .optional(),
  })
  .strict();

export const createApplicationSchema = z
  .object({
    entityRef,
    origin: z.enum(['scaffolded', 'imported']).optional(),
    spec: applicationSpecSchema,
    placement: placementSchema.optional(),
  })
  .strict();

export const patchApplicationSchema = z
  .object({
    spec: applicationSpecSchema.optional(),
    placement: placementSchema.optional(),
  })
  .strict()
  .refine(
    body => body.spec !== undefined || body.placement !== undefined,
    'give spec and/or placement',
  );

export const applicationListQuerySchema = z.object({
  entityRef: entityRef.optional(),
  ...pageQueryShape(),
});

export const deploymentListQuerySchema = z.object({
  entityRef: entityRef.optional(),
  cluster: dns1123Label.optional(),
  ...pageQueryShape(),
});

/** The query of the lists of one deployment or application (revisions, releases). */
export const pageQuerySchema = z.object(pageQueryShape());

export const createDeploymentSchema = z
  .object({
    entityRef,
    cluster: dns1123Label,
    image: applicationSpecSchema.shape.image,
    replicas: applicationSpecSchema.shape.replicas,
  })
  .strict();

export const idSchema = z.string().uuid('must be an id returned by the API');

export const releaseSchema = z
  .object({
    image: applicationSpecSchema.shape.image,
    replicas: applicationSpecSchema.shape.replicas,
    env: applicationSpecSchema.shape.env,
    clusters: z.array(dns1123Label).min(1).max(500).optional(),
    strategy: strategySchema.optional(),
  })
  .strict();

export const undeployQuerySchema = z
  .object({
    force: z
      .enum(['true', 'false'])
      .transform(value => value === 'true')
      .optional(),
  })
  .strict();

export const rollbackSchema = z
  .object({
    toRevision: z.number().int().min(1).max(1_000_000).optional(),
  })
  .strict();

export const eventListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

/**
 * The component a write is about, read before anything else of the body: the caller's
 * permission on it is decided first, so that a caller who may not write learns nothing of the
 * schema from a 400.
 */
export const writeTargetSchema = z
  .object({ entityRef: entityRef.optional() })
  .passthrough();
