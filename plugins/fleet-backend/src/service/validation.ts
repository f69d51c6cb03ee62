import { InputError, NotFoundError } from '@backstage/errors';
import type { FleetApiComponents } from '@cnp/plugin-fleet-common';
import { z } from 'zod';
import {
  addIssues,
  applicationSpecIssues,
  envIssues,
  placementIssues,
} from './kubernetesValues';
import { parseLabelSelector } from '../kubernetes/labelSelector';
import { strategySchema } from '../progressive/strategy';
import { stageIssues, type Stage } from '../stages/stageRules';
import { affinitySchema, tolerationSchema } from './podSchedulingSchemas';
import { checkBody, isPathParameter, isSchema } from './specValidation';

/*
 * Request validation. The OpenAPI spec (src/schema/openapi.yaml) is the contract: every field's
 * type, format, pattern, bounds, enum, whether it is required and that no other field is given
 * are its, checked by ./specValidation. What is left here is what JSON Schema cannot say, each
 * with why: rules between fields, parsing (a URL, a selector's text form), trimming (a schema
 * checks a value, it does not change it), and lookups.
 */

type Schemas = FleetApiComponents['schemas'];

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

/**
 * What the spec cannot check of a manual cluster's registration. `endpoint`: whether it is an
 * http(s) URL with a host, no credentials and no markup takes new URL(), not a pattern.
 * `kubeconfigRef` and `context` are trimmed before they are checked and stored (a schema does not
 * change a value), and the kubeconfig contents check is a case-insensitive search.
 */
export const createClusterSchema = z
  .object({
    endpoint,
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
  })
  .passthrough();

export type CreateClusterBody = Schemas['CreateClusterRequest'];

/**
 * A parser of one operation's request body: the spec's schema for it first, then `rules`, what
 * the spec cannot say (none where the spec says it all). `what` names the body in a 400.
 */
function bodyParser<T>(
  operation: `${Parameters<typeof checkBody>[0]} ${string}`,
  what: string,
  rules?: z.ZodTypeAny,
): (body: unknown) => T {
  const [method, path] = operation.split(' ') as [
    Parameters<typeof checkBody>[0],
    string,
  ];
  return body => {
    checkBody(method, path, body, what);
    return (rules ? parseOrThrow(rules, body, what) : body) as T;
  };
}

/** `POST /clusters`'s body: the spec's CreateClusterRequest, then {@link createClusterSchema}. */
export const parseCreateCluster = bodyParser<CreateClusterBody>(
  'post /clusters',
  'cluster',
  createClusterSchema,
);

/** `PATCH /clusters/:name`'s body: all the spec's. */
export const parsePatchCluster = bodyParser<Schemas['PatchClusterRequest']>(
  'patch /clusters/{name}',
  'cluster update',
);

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
 * A path parameter naming a resource (`/clusters/:name`, `/deployments/:id/…`): one the spec's
 * parameter schema refuses (not a DNS-1123 label, not an id the API hands out) cannot name
 * anything, and is answered 404, like one that names nothing.
 */
export function parsePathNameOr404(
  parameter: 'clusterName' | 'applicationId' | 'deploymentId' | 'releaseId',
  value: string,
  what: string,
): string {
  if (!isPathParameter(parameter, value)) {
    const shown = value.length > 100 ? `${value.slice(0, 100)}…` : value;
    throw new NotFoundError(`${what} '${shown}' not found`);
  }
  return value;
}

/** `/applications/:id`'s id, or a 404 naming no application. */
export function applicationIdOr404(value: string): string {
  return parsePathNameOr404('applicationId', value, 'Application');
}

/** Trimmed before it is used: a schema checks a value, it does not change it. */
export const entityRef = z.string().trim().min(1).max(255);

const labelSelectorExpression = z
  .object({ operator: z.string(), values: z.array(z.string()).optional() })
  .passthrough()
  .refine(
    e =>
      e.operator === 'In' || e.operator === 'NotIn'
        ? (e.values?.length ?? 0) > 0
        : e.values === undefined || e.values.length === 0,
    'In and NotIn need values; Exists and DoesNotExist take none',
  );

const CLUSTER_SELECTOR_HINT =
  "must be a label map or a selector such as 'env=prod,tier=web', 'env in (prod,staging)', 'env!=dev' or '!canary'";

/**
 * A cluster selector: its expressions' operator and values rule (between fields), and its text
 * form (`env=prod,tier=web`, `env in (prod,staging)`, `env!=dev`, `!canary`), parsed here into
 * the structured form, which the spec's ClusterSelector then checks.
 */
const clusterSelectorSchema = z.unknown().transform((value, ctx) => {
  const structured =
    typeof value === 'string' ? parseLabelSelector(value) : value;
  if (typeof value === 'string' && !isSchema('ClusterSelector', structured)) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: CLUSTER_SELECTOR_HINT,
    });
    return z.NEVER;
  }
  const expressions = (structured as { matchExpressions?: unknown })
    ?.matchExpressions;
  if (Array.isArray(expressions)) {
    expressions.forEach((expression, index) => {
      const parsed = labelSelectorExpression.safeParse(expression);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          ctx.addIssue({ ...issue, path: ['matchExpressions', index] });
      }
    });
  }
  return structured as Schemas['ClusterSelector'];
});

/**
 * What the spec cannot check of an application's spec: the scheduling fields' rules, and its
 * stages' (their selectors parsed as a placement's; names, order and clusters by ../stages).
 */
const applicationSpecRules = z
  .object({
    affinity: affinitySchema.optional(),
    tolerations: z.array(tolerationSchema).optional(),
    stages: z
      .array(
        z
          .object({ clusterSelector: clusterSelectorSchema.optional() })
          .passthrough(),
      )
      .optional(),
  })
  .passthrough()
  .superRefine((spec, ctx) =>
    addIssues(
      ctx,
      stageIssues(spec.stages as Stage[] | undefined).map(issue => ({
        ...issue,
        path: ['stages', ...issue.path],
      })),
    ),
  );

/** What the spec cannot check of a placement: its cluster selectors. */
export const placementSchema = z
  .object({
    clusterSelector: clusterSelectorSchema.optional(),
    overrides: z
      .array(
        z
          .object({
            clusterSelector: clusterSelectorSchema.optional(),
            // The spec types an override's env as the answers' EnvMap, whose values may be null
            // (hidden), because the clients' placement requests share that type; a request's
            // value is never null (see the spec's note on it).
            env: z
              .record(
                z
                  .unknown()
                  .refine(
                    value => value !== null,
                    "must be text (at most 4096 characters) or a valueFrom reference to a Secret's or ConfigMap's key",
                  ),
              )
              .optional(),
          })
          .passthrough(),
      )
      .optional(),
  })
  .passthrough();

/** A placement once checked: its selectors in their structured form. */
export type PlacementBody = Omit<
  Schemas['PlacementInput'],
  'clusterSelector' | 'overrides'
> & {
  clusterSelector?: Schemas['ClusterSelector'];
  overrides?: Array<
    Omit<
      NonNullable<Schemas['PlacementInput']['overrides']>[number],
      'clusterSelector'
    > & { clusterSelector?: Schemas['ClusterSelector'] }
  >;
};

const applicationRules = z
  .object({
    spec: applicationSpecRules.optional(),
    placement: placementSchema.optional(),
  })
  .passthrough()
  .superRefine((body, ctx) =>
    addIssues(ctx, [
      ...applicationSpecIssues(body.spec, ['spec']),
      ...placementIssues(body.placement, ['placement']),
    ]),
  );

/** An application request as the rules above leave it: its placement parsed. */
type WithPlacement<Request> = Omit<Request, 'placement'> & {
  placement?: PlacementBody;
};

export type CreateApplicationBody = WithPlacement<
  Schemas['CreateApplicationRequest']
>;

export type PatchApplicationBody = WithPlacement<
  Schemas['PatchApplicationRequest']
>;

/** `POST /applications`'s body: the spec's CreateApplicationRequest, then the rules above. */
export const parseCreateApplication = bodyParser<CreateApplicationBody>(
  'post /applications',
  'application',
  applicationRules,
);

/** `PATCH /applications/:id`'s body: the spec's PatchApplicationRequest, then the rules above. */
export const parsePatchApplication = bodyParser<PatchApplicationBody>(
  'patch /applications/{id}',
  'application update',
  applicationRules,
);

/** `POST /deployments`'s body: all the spec's. */
export const parseCreateDeployment = bodyParser<
  Schemas['CreateDeploymentRequest']
>('post /deployments', 'deployment');

/**
 * What the spec cannot check of a release: its strategy's rules (weights that increase, steps
 * that fit together, durations; see progressive/strategy).
 */
export const releaseSchema = z
  .object({ strategy: strategySchema.optional() })
  .passthrough()
  .superRefine((body, ctx) =>
    addIssues(ctx, envIssues((body as { env?: unknown }).env, ['env'])),
  );

export type ReleaseBody = Omit<Schemas['CreateReleaseRequest'], 'strategy'> &
  z.infer<typeof releaseSchema>;

/** `POST /applications/:id/releases`'s body: the spec's CreateReleaseRequest, then the strategy. */
export const parseRelease = bodyParser<ReleaseBody>(
  'post /applications/{id}/releases',
  'release',
  releaseSchema,
);

/** `POST /releases/:id/approve`'s body (none: `{}`): all the spec's. */
export const parseApproval = bodyParser<Schemas['ReleaseDecisionRequest']>(
  'post /releases/{id}/approve',
  'approval',
);

/** `POST /releases/:id/reject`'s body (none: `{}`): all the spec's. */
export const parseRejection = bodyParser<Schemas['ReleaseDecisionRequest']>(
  'post /releases/{id}/reject',
  'rejection',
);

/** `POST /deployments/:id/rollback`'s body (none: `{}`): all the spec's. */
export const parseRollback = bodyParser<Schemas['RollbackRequest']>(
  'post /deployments/{id}/rollback',
  'rollback',
);

/**
 * The component a write is about, read before anything else of the body: the caller's
 * permission on it is decided first, so that a caller who may not write learns nothing of the
 * schema from a 400.
 */
export const writeTargetSchema = z
  .object({ entityRef: entityRef.optional() })
  .passthrough();

/** `POST /applications/:id/preview`'s body: all the spec's. */
export const parsePreview = bodyParser<Schemas['PreviewRequest']>(
  'post /applications/{id}/preview',
  'preview',
);
