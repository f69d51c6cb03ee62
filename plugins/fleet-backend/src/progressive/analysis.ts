import type {
  AnalysisMeasurement,
  AnalysisTemplate,
} from '@cnp/plugin-fleet-common';
import jexl from 'jexl';

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

type QueryResult =
  | { kind: 'values'; values: number[] }
  | { kind: 'inconclusive'; message: string }
  | { kind: 'error'; message: string };

/**
 * Reads a Prometheus answer (`GET /api/v1/query`): a vector's sample values in order, a scalar's
 * value; an error answer or a shape it does not know is an error.
 */
function readAnswer(body: any): QueryResult {
  if (body?.status !== 'success') {
    return {
      kind: 'error',
      message: `Prometheus answered ${String(
        body?.errorType ?? 'an error',
      ).slice(0, 64)}: ${String(body?.error ?? 'no message').slice(0, 300)}`,
    };
  }
  const data = body.data ?? {};
  if (data.resultType === 'scalar') {
    return { kind: 'values', values: [promNumber(data.result?.[1])] };
  }
  if (data.resultType === 'vector' && Array.isArray(data.result)) {
    if (data.result.length === 0) {
      return {
        kind: 'inconclusive',
        message: 'the query returned an empty vector',
      };
    }
    return {
      kind: 'values',
      values: data.result.map((sample: any) => promNumber(sample?.value?.[1])),
    };
  }
  return {
    kind: 'error',
    message: `unsupported Prometheus result type '${data.resultType}'`,
  };
}

/**
 * One measurement of one analysis template on one cluster, with Argo Rollouts' semantics: the
 * success condition true is `Successful`, false is `Failed`; an unreachable Prometheus, an error
 * answer or an empty vector is `Inconclusive` (never a success). The condition is evaluated by
 * jexl over `result` (the vector's values), never by `eval`.
 */
export async function measure(
  template: AnalysisTemplate,
  context: AnalysisContext,
  options: { timeoutMs?: number; fetchImpl?: typeof fetch } = {},
): Promise<AnalysisMeasurement> {
  const at = new Date().toISOString();
  const base = {
    template: template.name,
    cluster: context.cluster,
    condition: template.successCondition,
    at,
  };
  const { address, query } = template.provider.prometheus;
  const url = new URL(
    'api/v1/query',
    address.endsWith('/') ? address : `${address}/`,
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
      : {
          kind: 'error',
          message: `Prometheus answered HTTP ${response.status} without JSON`,
        };
  } catch (error) {
    answer = {
      kind: 'error',
      message: `Prometheus at ${address} is unreachable: ${
        (error as Error).message
      }`,
    };
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
      message: 'the query returned NaN',
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
