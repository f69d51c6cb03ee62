import type {
  AnalysisMeasurement,
  AnalysisTemplate,
} from '@cnp/plugin-fleet-common';
import jexl from 'jexl';
import {
  isAllowedAddress,
  normalizePrometheusAddress,
} from './prometheusAddress';

/** What a query's placeholders are filled with, for one cluster. */
export interface AnalysisContext {
  cluster: string;
  app: string;
  namespace: string;
  /** The revision the canary runs. */
  revision: number;
  /** The image tag (or digest) the canary runs. */
  version: string;
}

const PLACEHOLDER = /\{\{\s*(cluster|app|namespace|revision|version)\s*\}\}/g;

/** Fills `{{cluster}}`, `{{app}}`, `{{namespace}}`, `{{revision}}`, `{{version}}`. */
export function fillQuery(query: string, context: AnalysisContext): string {
  return query.replace(PLACEHOLDER, (_, key: keyof AnalysisContext) =>
    // A value is a label value inside quotes: nothing in it may end the string.
    String(context[key]).replace(/["\\]/g, ''),
  );
}

/** A sample value as Prometheus writes it: a number, `NaN`, `+Inf` or `-Inf`, as a string. */
function promNumber(value: unknown): number {
  if (value === '+Inf') return Infinity;
  if (value === '-Inf') return -Infinity;
  return Number(value);
}

/**
 * Why a measurement has no value, in the only words Fleet shows: a provider's own text (its error
 * message, an HTTP status, whatever answered at that address) is never passed on, to anyone.
 */
export type NoResult = 'error' | 'unreachable' | 'no data';

const NO_RESULT: readonly string[] = ['error', 'unreachable', 'no data'];

/** Whether a message is one of Fleet's three words for a measurement without a value. */
export function isNoResult(message: unknown): message is NoResult {
  return typeof message === 'string' && NO_RESULT.includes(message);
}

/**
 * The word an inconclusive measurement's message is shown as: itself when it is one of the three,
 * else (a measurement stored before the provider's text was kept out) the word it stood for.
 */
export function noResultWord(message: string): NoResult {
  if (isNoResult(message)) return message;
  if (/empty vector|NaN/.test(message)) return 'no data';
  if (/unreachable/.test(message)) return 'unreachable';
  return 'error';
}

type QueryResult =
  | { kind: 'values'; values: number[] }
  | { kind: 'inconclusive'; message: NoResult };

/**
 * Reads a Prometheus answer (`GET /api/v1/query`): a vector's sample values in order, a scalar's
 * value; an error answer or a shape it does not know is an error, an empty vector no data.
 */
function readAnswer(body: any): QueryResult {
  if (body?.status !== 'success')
    return { kind: 'inconclusive', message: 'error' };
  const data = body.data ?? {};
  if (data.resultType === 'scalar') {
    return { kind: 'values', values: [promNumber(data.result?.[1])] };
  }
  if (data.resultType === 'vector' && Array.isArray(data.result)) {
    if (data.result.length === 0) {
      return { kind: 'inconclusive', message: 'no data' };
    }
    return {
      kind: 'values',
      values: data.result.map((sample: any) => promNumber(sample?.value?.[1])),
    };
  }
  return { kind: 'inconclusive', message: 'error' };
}

/**
 * One measurement of one analysis template on one cluster, with Argo Rollouts' semantics: the
 * success condition true is `Successful`, false is `Failed`; an unreachable Prometheus, an error
 * answer or an empty vector is `Inconclusive` (never a success). The condition is evaluated by
 * jexl over `result` (the vector's values), never by `eval`. Its message is `error`,
 * `unreachable` or `no data`: nothing the provider said. With `allowedAddresses`, an address not
 * among them is not queried at all (`error`): a release stored before the list was set, or since
 * taken off it, measures nothing there.
 */
export async function measure(
  template: AnalysisTemplate,
  context: AnalysisContext,
  options: {
    timeoutMs?: number;
    fetchImpl?: typeof fetch;
    allowedAddresses?: readonly string[];
  } = {},
): Promise<AnalysisMeasurement> {
  const at = new Date().toISOString();
  const base = {
    template: template.name,
    cluster: context.cluster,
    condition: template.successCondition,
    at,
  };
  if (!template.provider.prometheus) {
    return { ...base, phase: 'Inconclusive', value: null, message: 'error' };
  }
  const { address, query } = template.provider.prometheus;
  if (
    options.allowedAddresses &&
    !isAllowedAddress(address, options.allowedAddresses)
  ) {
    return { ...base, phase: 'Inconclusive', value: null, message: 'error' };
  }
  const url = new URL(
    'api/v1/query',
    `${normalizePrometheusAddress(address) ?? address}/`,
  );
  url.searchParams.set('query', fillQuery(query, context));
  let answer: QueryResult;
  try {
    const response = await (options.fetchImpl ?? fetch)(url, {
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      headers: { accept: 'application/json' },
      // The address is the one the strategy names: a redirect elsewhere is not followed.
      redirect: 'error',
    });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    answer = body
      ? readAnswer(body)
      : { kind: 'inconclusive', message: 'error' };
  } catch {
    // Refused, timed out, redirected: the reason stays here (it names hosts and system errors).
    answer = { kind: 'inconclusive', message: 'unreachable' };
  }
  if (answer.kind !== 'values') {
    return {
      ...base,
      phase: 'Inconclusive',
      value: null,
      message: answer.message,
    };
  }
  const value = answer.values[0];
  if (answer.values.some(v => Number.isNaN(v))) {
    return {
      ...base,
      phase: 'Inconclusive',
      value: Number.isNaN(value) ? null : value,
      message: 'no data',
    };
  }
  try {
    const passed = await jexl.eval(template.successCondition, {
      result: answer.values,
    });
    return { ...base, phase: passed === true ? 'Successful' : 'Failed', value };
  } catch (error) {
    return {
      ...base,
      phase: 'Error',
      value,
      message: `the success condition could not be evaluated: ${
        (error as Error).message
      }`,
    };
  }
}
