import { InputError } from '@backstage/errors';
import type { CanaryStep, ReleaseWave } from '@cnp/plugin-fleet-common';
import jexl from 'jexl';
import { z } from 'zod';
import {
  checkJudgedTemplate,
  compareSchema,
  judgeSchema,
} from './judge/compareSchema';

const DURATION_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
const DURATION = /^(\d+(?:\.\d+)?(ms|h|m|s))+$/;
const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * A Go-style duration as Argo Rollouts takes it (`30s`, `45m`, `1h30m`, `500ms`), or a bare
 * number of seconds. Undefined when it does not parse.
 */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
  }
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) {
    total += Number(amount) * UNIT_MS[unit];
  }
  return total;
}

/** The longest pause or timeout a strategy may name. */
const MAX_DURATION_MS = 30 * 24 * 3_600_000;

const duration = z.union([z.string().max(32), z.number()]).refine(value => {
  const ms = parseDuration(value);
  return ms !== undefined && ms <= MAX_DURATION_MS;
}, 'must be a duration such as 30s, 45m, 1h30m or a number of seconds, at most 30 days');

/** `3`, or `25%`: an int or a percentage, as Argo's maxSurge / maxUnavailable. */
const intOrPercent = z
  .union([
    z.number().int().min(0).max(10_000),
    z
      .string()
      .regex(/^\d{1,3}%$/, "must be a number or a percentage like '25%'"),
  ])
  .refine(
    value => typeof value === 'number' || Number(value.slice(0, -1)) <= 100,
    'a percentage is at most 100%',
  );

const labelMap = z.record(z.string().max(253), z.string().max(63));

const waveSchema = z
  .object({
    clusters: z.array(z.string().min(1).max(63)).min(1).max(500).optional(),
    clusterSelector: labelMap.optional(),
    percent: z.number().int().min(1).max(100).optional(),
  })
  .strict()
  .refine(
    wave =>
      [wave.clusters, wave.clusterSelector, wave.percent].filter(
        v => v !== undefined,
      ).length === 1,
    'a wave names exactly one of clusters, clusterSelector or percent',
  );

const stepSchema = z.union([
  z.object({ setWeight: z.number().int().min(1).max(100) }).strict(),
  z
    .object({
      pause: z.object({ duration: duration.optional() }).strict(),
    })
    .strict(),
]);

/** A successCondition: compiled by jexl (never `eval`), so a syntax error is caught here. */
const condition = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(500)
  .superRefine((value, ctx) => {
    try {
      jexl.compile(value);
    } catch (error) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `is not a valid expression: ${(error as Error).message}`,
      });
    }
  });

const httpAddress = z
  .string()
  .max(2048)
  .refine(value => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL such as http://prometheus.monitoring.svc:9090');

const templateSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label'),
    interval: duration
      .refine(
        value => (parseDuration(value) ?? 0) >= 1000,
        'must be at least 1s',
      )
      .optional(),
    failureLimit: z.number().int().min(0).max(100).optional(),
    inconclusiveLimit: z.number().int().min(0).max(100).optional(),
    consecutiveErrorLimit: z.number().int().min(0).max(100).optional(),
    successCondition: condition.optional(),
    compare: compareSchema.optional(),
    weight: z.number().gt(0, 'must be above 0').max(1_000_000).optional(),
    // One key: the provider's name (Fleet's `prometheus`, or one a backend module added; the
    // route checks it is registered), its value the provider's settings.
    provider: z
      .object(
        {
          prometheus: z
            .object({
              address: httpAddress,
              query: z.string().min(1).max(4096),
            })
            .strict()
            .optional(),
        },
        { required_error: 'an analysis needs a provider' },
      )
      .catchall(z.record(z.string(), z.unknown()))
      .refine(
        provider => Object.keys(provider).length === 1,
        'must name exactly one analysis provider',
      ),
  })
  .strict()
  .superRefine(checkJudgedTemplate);

export const strategySchema = z
  .object({
    waves: z.array(waveSchema).min(1).max(20).optional(),
    canary: z
      .object({
        steps: z.array(stepSchema).min(1).max(50),
        maxSurge: intOrPercent.optional(),
        maxUnavailable: intOrPercent.optional(),
        trafficRouting: z
          .object({
            istio: z
              .object({
                virtualService: z
                  .object({
                    name: z.string().min(1).max(253),
                    routes: z
                      .array(z.string().min(1).max(253))
                      .max(20)
                      .optional(),
                  })
                  .strict(),
              })
              .strict()
              .optional(),
            gatewayAPI: z
              .object({
                // The HTTPRoute's name: a DNS subdomain, in the application's namespace.
                httpRoute: z.string().min(1).max(253),
              })
              .strict()
              .optional(),
          })
          .strict()
          .refine(
            routing => !(routing.istio && routing.gatewayAPI),
            'name either istio or gatewayAPI, not both',
          )
          .optional(),
      })
      .strict(),
    analysis: z
      .object({
        templates: z.array(templateSchema).min(1).max(10),
        judge: judgeSchema.optional(),
      })
      .strict()
      .optional(),
    rollback: z
      .object({ enabled: z.boolean().optional(), timeout: duration.optional() })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((strategy, ctx) => {
    let last = 0;
    strategy.canary.steps.forEach((step, index) => {
      if (!('setWeight' in step)) return;
      if (step.setWeight <= last) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['canary', 'steps', index, 'setWeight'],
          message: `weights must increase: ${step.setWeight} comes after ${last}`,
        });
      }
      last = step.setWeight;
    });
    if (!strategy.canary.steps.some(step => 'setWeight' in step)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['canary', 'steps'],
        message: 'give at least one setWeight step',
      });
    }
    const { maxSurge, maxUnavailable } = strategy.canary;
    if (isZero(maxSurge ?? '25%') && isZero(maxUnavailable ?? 0)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['canary', 'maxSurge'],
        message: 'maxSurge and maxUnavailable cannot both be 0',
      });
    }
    const percents = (strategy.waves ?? []).map(w => w.percent);
    let lastPercent = 0;
    percents.forEach((percent, index) => {
      if (percent === undefined) return;
      if (percent <= lastPercent) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['waves', index, 'percent'],
          message: `wave percentages are cumulative and must increase: ${percent} comes after ${lastPercent}`,
        });
      }
      lastPercent = percent;
    });
    const names = new Set<string>();
    strategy.analysis?.templates.forEach((template, index) => {
      if (names.has(template.name)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['analysis', 'templates', index, 'name'],
          message: `'${template.name}' is used twice`,
        });
      }
      names.add(template.name);
    });
  });

function isZero(value: number | string): boolean {
  return typeof value === 'number'
    ? value === 0
    : Number(value.slice(0, -1)) === 0;
}

/** Resolves an int-or-percent against a replica count, rounding as Argo does (surge up, unavailable down). */
export function resolveIntOrPercent(
  value: number | string,
  total: number,
  round: 'up' | 'down',
): number {
  if (typeof value === 'number') return value;
  const exact = (Number(value.slice(0, -1)) * total) / 100;
  return round === 'up' ? Math.ceil(exact) : Math.floor(exact);
}

export interface WaveTarget {
  name: string;
  labels: Record<string, string>;
}

/**
 * Splits the release's targets into waves, in order. A cluster is in the first wave that selects
 * it; `percent` counts over all targets, rounded up, the clusters of earlier waves included
 * (`10`, `50`, `100` reach 10 %, then half, then all). Targets no wave selects form a last wave.
 * A wave that selects no cluster is a 400 naming it.
 */
export function resolveWaves(
  waves: ReleaseWave[] | undefined,
  targets: WaveTarget[],
  /** Targets left out (OFFLINE): a wave may name them; it then runs without them. */
  skipped: string[] = [],
): string[][] {
  const ordered = [...targets].sort((a, b) => a.name.localeCompare(b.name));
  if (!waves || waves.length === 0) return [ordered.map(t => t.name)];
  const known = new Set(ordered.map(t => t.name));
  const taken = new Set<string>();
  const result: string[][] = [];
  waves.forEach((wave, index) => {
    let picked: string[];
    if (wave.clusters) {
      const unknown = wave.clusters.filter(
        name => !known.has(name) && !skipped.includes(name),
      );
      if (unknown.length) {
        throw new InputError(
          `Invalid release: strategy.waves.${index}.clusters: ${unknown
            .map(n => `'${n}'`)
            .join(', ')} is not a target of this release`,
        );
      }
      picked = wave.clusters.filter(
        name => known.has(name) && !taken.has(name),
      );
      // A wave of skipped clusters only is no wave at all.
      if (picked.length === 0 && wave.clusters.some(n => skipped.includes(n)))
        return;
    } else if (wave.clusterSelector) {
      const selector = wave.clusterSelector;
      picked = ordered
        .filter(t =>
          Object.entries(selector).every(([k, v]) => t.labels[k] === v),
        )
        .map(t => t.name)
        .filter(name => !taken.has(name));
    } else {
      const upTo = Math.ceil((ordered.length * wave.percent!) / 100);
      const more = Math.max(0, upTo - taken.size);
      picked = ordered
        .map(t => t.name)
        .filter(name => !taken.has(name))
        .slice(0, more);
    }
    if (picked.length === 0) {
      throw new InputError(
        `Invalid release: strategy.waves.${index} selects no cluster that an earlier wave did not already take`,
      );
    }
    picked.forEach(name => taken.add(name));
    result.push([...new Set(picked)]);
  });
  const rest = ordered.map(t => t.name).filter(name => !taken.has(name));
  if (rest.length) result.push(rest);
  return result;
}

/** The weight a step sets, or the weight in force at a pause (the last setWeight before it). */
export function weightAt(steps: CanaryStep[], index: number): number {
  for (let i = Math.min(index, steps.length - 1); i >= 0; i--) {
    const step = steps[i];
    if ('setWeight' in step) return step.setWeight;
  }
  return 0;
}
