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
export function promNumber(value: unknown): number {
  if (value === '+Inf') return Infinity;
  if (value === '-Inf') return -Infinity;
  return Number(value);
}

/**
 * Why a measurement has no value, in the only words Fleet shows: a provider's own text (its error
 * message, an HTTP status, whatever answered at that address) is never passed on, to anyone.
 * `unreachable` and `error` say the measurement could not be taken (`Error`), `no data` that the
 * query answered with nothing to judge (`Inconclusive`).
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
  | { kind: 'no data' }
  | { kind: 'error'; message: 'error' | 'unreachable' };

/**
 * Reads a Prometheus answer (`GET /api/v1/query`): a vector's sample values in order, a scalar's
 * value; an error answer or a shape it does not know is an error, an empty vector no data.
 */
function readAnswer(body: any): QueryResult {
  if (body?.status !== 'success') return { kind: 'error', message: 'error' };
  const data = body.data ?? {};
  if (data.resultType === 'scalar') {
    return { kind: 'values', values: [promNumber(data.result?.[1])] };
  }
  if (data.resultType === 'vector' && Array.isArray(data.result)) {
    if (data.result.length === 0) {
      return { kind: 'no data' };
    }
    return {
      kind: 'values',
      values: data.result.map((sample: any) => promNumber(sample?.value?.[1])),
    };
  }
  return { kind: 'error', message: 'error' };
}

/** How a Prometheus server is asked: the timeout, the servers allowed, the fetch used. */
export interface PrometheusRequestOptions {
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
  allowedAddresses?: readonly string[];
}

/** The most of an answer Fleet reads: a larger one is an error, never held in memory. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** An answer's text, or undefined past `MAX_ANSWER_BYTES`. */
async function boundedText(response: Response): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    return undefined;
  }
  if (!response.body) return response.text();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * One GET of a Prometheus API path (`api/v1/query`, `api/v1/query_range`) at the address a
 * template names: the parsed answer of a 2xx, or why there is none, in Fleet's words only. An
 * address off the allow-list is not asked at all (`error`); an HTTP error, a body that is not
 * JSON or is past `MAX_ANSWER_BYTES` is an `error`; a refusal, a timeout or a redirect (the
 * address is the one the strategy names: a redirect elsewhere is not followed) `unreachable`.
 */
export async function getPrometheus(
  address: string,
  path: string,
  params: Record<string, string>,
  options: PrometheusRequestOptions = {},
): Promise<
  | { kind: 'body'; body: any }
  | { kind: 'error'; message: 'error' | 'unreachable' }
> {
  if (
    options.allowedAddresses &&
    !isAllowedAddress(address, options.allowedAddresses)
  ) {
    return { kind: 'error', message: 'error' };
  }
  const url = new URL(
    path,
    `${normalizePrometheusAddress(address) ?? address}/`,
  );
  for (const [key, value] of Object.entries(params))
    url.searchParams.set(key, value);
  try {
    const response = await (options.fetchImpl ?? fetch)(url, {
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      headers: { accept: 'application/json' },
      redirect: 'error',
    });
    const text = await boundedText(response);
    let body: unknown;
    try {
      body = text === undefined ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    // An HTTP error is an error whatever its body says.
    return response.ok && body
      ? { kind: 'body', body }
      : { kind: 'error', message: 'error' };
  } catch {
    // Refused, timed out, redirected: the reason stays here (it names hosts and system errors).
    return { kind: 'error', message: 'unreachable' };
  }
}

/**
 * One measurement of one analysis template on one cluster, with Argo Rollouts' semantics: the
 * success condition true is `Successful`, false is `Failed`; a query that could not be made (an
 * unreachable Prometheus, a timeout, an HTTP error, an error answer, a condition that cannot be
 * evaluated) is `Error`; an answer with nothing to judge (an empty vector, NaN) is
 * `Inconclusive`. Neither is ever a success. The condition is evaluated by jexl over `result`
 * (the vector's values), never by `eval`. Its message is `error`, `unreachable` or `no data`:
 * nothing the provider said. With `allowedAddresses`, an address not among them is not queried
 * at all (`error`): a release stored before the list was set, or since taken off it, measures
 * nothing there. A template judged against a baseline (`compare`) has no condition: it is
 * judged by the orchestrator from two range queries, never measured here, and is an `error`
 * without a query.
 */
export async function measure(
  template: AnalysisTemplate,
  context: AnalysisContext,
  options: PrometheusRequestOptions = {},
): Promise<AnalysisMeasurement> {
  const at = new Date().toISOString();
  const base = {
    template: template.name,
    cluster: context.cluster,
    condition: template.successCondition,
    at,
  };
  const condition = template.successCondition;
  if (!template.provider.prometheus || condition === undefined) {
    return { ...base, phase: 'Error', value: null, message: 'error' };
  }
  const { address, query } = template.provider.prometheus;
  const got = await getPrometheus(
    address,
    'api/v1/query',
    { query: fillQuery(query, context) },
    options,
  );
  const answer: QueryResult = got.kind === 'body' ? readAnswer(got.body) : got;
  if (answer.kind === 'error') {
    return { ...base, phase: 'Error', value: null, message: answer.message };
  }
  if (answer.kind === 'no data') {
    return { ...base, phase: 'Inconclusive', value: null, message: 'no data' };
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
    const passed = await jexl.eval(condition, { result: answer.values });
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
