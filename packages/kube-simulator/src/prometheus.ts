/**
 * A Prometheus query endpoint for canary analysis, on its own plain-HTTP
 * listener on 127.0.0.1 (Prometheus is usually plain HTTP inside a cluster).
 *
 * It serves the instant-query and range-query APIs in the real Prometheus format:
 *   GET  /api/v1/query?query=<promql>&time=<unix seconds | RFC 3339>
 *   POST /api/v1/query   (application/x-www-form-urlencoded)
 *   → 200 {"status":"success","data":{"resultType":"vector","result":[{"metric":{...},"value":[<t>,"<v>"]}]}}
 *   GET  /api/v1/query_range?query=<promql>&start=<t>&end=<t>&step=<15s | 1m | seconds>
 *   POST /api/v1/query_range   (application/x-www-form-urlencoded)
 *   → 200 {"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[<t>,"<v>"],...]}]}}
 *     one value per step from start to end inclusive
 *   → 400 {"status":"error","errorType":"bad_data","error":"..."} for a missing or
 *     invalid parameter, an end before the start, more than 11,000 points a series
 *   → 422 {"status":"error","errorType":"execution","error":"..."} for an error rule
 *   GET  /-/healthy, /-/ready
 *
 * It cannot evaluate PromQL. It extracts the equality label matchers
 * (`name="value"`, not `!=`, `=~`, `!~`) from the query text and answers from
 * rules: the rule with the most labels, all of which equal a matcher of the
 * query, wins (a later rule wins a tie); no rule gives an empty result. A
 * rule answers a value (the same at every timestamp) or samples drawn from a
 * distribution (promSeries.ts).
 *
 * Faults: 'down' closes every connection unanswered; 'unavailable' answers
 * 503 "Service Unavailable" on every path but /-/healthy, as Prometheus does
 * while it is not ready (and as a proxy in front of a dead one does).
 */
import {
  createServer,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import { listenLocally } from './listen';
import { parseRangeParams, RangeParams, stepTimestamps } from './promRange';
import {
  parseSeries,
  PrometheusDistribution,
  PrometheusSeries,
  sampleAt,
} from './promSeries';
import { isPlainObject } from './util';

/** A number, `null` for an empty vector, or an error Prometheus answers with (422, execution). */
export type PrometheusValue =
  | number
  | 'NaN'
  | '+Inf'
  | '-Inf'
  | null
  | { error: string };

/**
 * The labels a query must name (`{ variant: 'canary' }`), or the same written
 * as PromQL label matchers (`'variant="canary"'`).
 */
export type PrometheusMatch = Record<string, string> | string;

/** A rule's answer: a value at every timestamp, or samples drawn from a distribution. */
export type PrometheusAnswer = PrometheusValue | PrometheusSeries;

export interface PrometheusRule {
  match: Record<string, string>;
  /** The answer at every timestamp (absent when `distribution` is set). */
  value?: PrometheusValue;
  /** Where the samples are drawn from (absent when `value` is set). */
  distribution?: PrometheusDistribution;
  /** The PRNG seed of `distribution`. */
  seed?: number;
}

export type PrometheusFaultMode = 'ok' | 'down' | 'unavailable';

const FAULT_MODES: readonly string[] = ['ok', 'down', 'unavailable'];

/** Label matchers `name="value"` (and 'value') of a PromQL text; `!=`, `=~`, `!~` are left out. */
export function equalityMatchers(query: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const re =
    /([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)/g;
  for (const m of query.matchAll(re)) {
    if (m[2] !== '=') continue;
    const quoted = m[3];
    let value = quoted.slice(1, -1);
    if (quoted[0] !== '`') value = value.replace(/\\(.)/g, '$1');
    out.push([m[1], value]);
  }
  return out;
}

function parseMatch(match: unknown): Record<string, string> | string {
  if (typeof match === 'string') {
    const matchers = equalityMatchers(match);
    if (matchers.length === 0)
      return 'match must name at least one label="value" matcher';
    return Object.fromEntries(matchers);
  }
  if (!isPlainObject(match))
    return 'expected {"match":{"label":"value",...},"value":number|null|{"error":"..."}} or {"match":...,"distribution":{...},"seed"?:n}';
  for (const [k, v] of Object.entries(match)) {
    if (typeof v !== 'string') return `match.${k} must be a string`;
  }
  return { ...(match as Record<string, string>) };
}

export function parseRule(input: unknown): PrometheusRule | string {
  const match = parseMatch(isPlainObject(input) ? input.match : undefined);
  if (typeof match === 'string') return match;
  if (isPlainObject(input) && input.distribution !== undefined) {
    if (input.value !== undefined)
      return 'a rule has a value or a distribution, not both';
    const series = parseSeries(input);
    if (typeof series === 'string') return series;
    return { match, ...series };
  }
  const value = (input as Record<string, unknown>).value;
  const ok =
    value === null ||
    (typeof value === 'number' && Number.isFinite(value)) ||
    value === 'NaN' ||
    value === '+Inf' ||
    value === '-Inf' ||
    (isPlainObject(value) && typeof value.error === 'string');
  if (!ok)
    return 'value must be a number, "NaN", "+Inf", "-Inf", null or {"error":"message"}';
  return {
    match,
    value: isPlainObject(value)
      ? { error: String(value.error) }
      : (value as PrometheusValue),
  };
}

/** Go's strconv.FormatFloat(f, 'f', -1, 64), as Prometheus formats sample values. */
function formatSample(value: number | string): string {
  if (typeof value === 'string') return value;
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  const text = String(value);
  if (!/e/i.test(text)) return text;
  return value.toLocaleString('en-US', {
    useGrouping: false,
    maximumFractionDigits: 20,
  });
}

const API_PATHS: Record<string, 'instant' | 'range' | undefined> = {
  '/api/v1/query': 'instant',
  '/api/v1/query_range': 'range',
};

/** A rule's identity: its labels, sorted (the same labels replace a rule). */
function ruleKey(rule: PrometheusRule): string {
  return JSON.stringify(Object.entries(rule.match).sort());
}

/** What `rule` answers at `timeMs`: a sample, null for no data, or an error. */
function answerAt(
  rule: PrometheusRule | undefined,
  timeMs: number,
): number | string | null | { error: string } {
  if (!rule) return null;
  if (rule.distribution)
    return sampleAt(
      { distribution: rule.distribution, seed: rule.seed },
      ruleKey(rule),
      timeMs,
    );
  return rule.value ?? null;
}

function parseTime(raw: string | null): number | undefined | 'bad' {
  if (raw === null || raw === '') return undefined;
  if (/^[-+]?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? 'bad' : ms / 1000;
}

export class PrometheusSim {
  private rules: PrometheusRule[] = [];
  private fault: PrometheusFaultMode = 'ok';
  private readonly queries: string[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server, readonly url: string) {
    server.on('connection', (socket: Socket) => {
      if (this.fault === 'down') {
        socket.destroy();
        return;
      }
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.onRequest(req, res).catch(() => {
        if (!res.headersSent)
          this.send(res, 500, {
            status: 'error',
            errorType: 'internal',
            error: 'internal error',
          });
      });
    });
  }

  static async start(port = 0): Promise<PrometheusSim> {
    const server = createServer();
    server.keepAliveTimeout = 5_000;
    const actual = await listenLocally(server, port);
    return new PrometheusSim(server, `http://127.0.0.1:${actual}`);
  }

  /** A rule answering `answer`: a value, or `{ distribution, seed? }` to draw samples from. */
  setRule(match: PrometheusMatch, answer: PrometheusAnswer): void {
    const parsed = parseRule(
      isPlainObject(answer) && 'distribution' in answer
        ? { match, ...answer }
        : { match, value: answer },
    );
    if (typeof parsed === 'string') throw new Error(parsed);
    const key = ruleKey(parsed);
    this.rules = this.rules.filter(r => ruleKey(r) !== key);
    this.rules.push(parsed);
  }

  clearRules(): void {
    this.rules = [];
  }

  listRules(): PrometheusRule[] {
    return this.rules.map(r =>
      r.distribution
        ? {
            match: { ...r.match },
            distribution: { ...r.distribution },
            seed: r.seed,
          }
        : { match: { ...r.match }, value: r.value },
    );
  }

  setFault(mode: PrometheusFaultMode): void {
    if (!FAULT_MODES.includes(mode))
      throw new Error(
        `invalid Prometheus fault mode ${JSON.stringify(
          mode,
        )}: "ok", "down" or "unavailable"`,
      );
    this.fault = mode;
    if (mode === 'down') {
      for (const socket of this.sockets) socket.destroy();
      this.sockets.clear();
    }
  }

  getFault(): PrometheusFaultMode {
    return this.fault;
  }

  /** The query strings received, oldest first. */
  queryLog(): string[] {
    return [...this.queries];
  }

  /** The rule that answers `query`, if any. */
  ruleFor(query: string): PrometheusRule | undefined {
    const matchers = equalityMatchers(query);
    let best: PrometheusRule | undefined;
    for (const rule of this.rules) {
      const labels = Object.entries(rule.match);
      const all = labels.every(([k, v]) =>
        matchers.some(([mk, mv]) => mk === k && mv === v),
      );
      if (all && (!best || labels.length >= Object.keys(best.match).length))
        best = rule;
    }
    return best;
  }

  stop(): Promise<void> {
    return new Promise(done => {
      this.server.close(() => done());
      for (const socket of this.sockets) socket.destroy();
      this.server.closeAllConnections();
    });
  }

  private send(
    res: ServerResponse,
    status: number,
    body: unknown,
    text?: string,
  ) {
    const payload = text ?? JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type':
        text !== undefined ? 'text/plain; charset=utf-8' : 'application/json',
      'Content-Length': Buffer.byteLength(payload),
    });
    res.end(payload);
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse) {
    if (this.fault === 'down') {
      req.socket.destroy();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (this.fault === 'unavailable' && url.pathname !== '/-/healthy') {
      this.send(res, 503, undefined, 'Service Unavailable');
      return;
    }
    if (url.pathname === '/-/healthy' || url.pathname === '/-/ready') {
      const text =
        url.pathname === '/-/healthy'
          ? 'Prometheus Server is Healthy.\n'
          : 'Prometheus Server is Ready.\n';
      this.send(res, 200, undefined, text);
      return;
    }
    const api = API_PATHS[url.pathname];
    if (!api) {
      this.send(res, 404, undefined, '404 page not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'POST') {
      this.send(res, 405, undefined, 'Method Not Allowed\n');
      return;
    }
    const params = new URLSearchParams(url.search);
    if (req.method === 'POST') {
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim();
      if (type === 'application/x-www-form-urlencoded') {
        for (const [k, v] of new URLSearchParams(
          Buffer.concat(chunks).toString('utf8'),
        )) {
          params.append(k, v);
        }
      }
    }
    if (api === 'range') this.rangeQuery(params, res);
    else this.instantQuery(params, res);
  }

  private badData(res: ServerResponse, error: string) {
    this.send(res, 400, { status: 'error', errorType: 'bad_data', error });
  }

  private logQuery(query: string) {
    this.queries.push(query);
    if (this.queries.length > 10_000)
      this.queries.splice(0, this.queries.length - 10_000);
  }

  private instantQuery(params: URLSearchParams, res: ServerResponse) {
    const query = params.get('query') ?? '';
    const time = parseTime(params.get('time'));
    if (time === 'bad') {
      this.badData(
        res,
        `invalid parameter "time": cannot parse "${params.get(
          'time',
        )}" to a valid timestamp`,
      );
      return;
    }
    if (!query.trim()) {
      this.badData(
        res,
        'invalid parameter "query": 1:1: parse error: no expression found in input',
      );
      return;
    }
    this.logQuery(query);
    const at = time ?? Date.now() / 1000;
    const rule = this.ruleFor(query);
    const value = answerAt(rule, at * 1000);
    if (isPlainObject(value)) {
      this.executionError(res, value.error);
      return;
    }
    const result =
      value === null
        ? []
        : [{ metric: { ...rule!.match }, value: [at, formatSample(value)] }];
    this.send(res, 200, {
      status: 'success',
      data: { resultType: 'vector', result },
    });
  }

  private rangeQuery(params: URLSearchParams, res: ServerResponse) {
    const range: RangeParams | string = parseRangeParams(params);
    if (typeof range === 'string') {
      this.badData(res, range);
      return;
    }
    this.logQuery(range.query);
    const rule = this.ruleFor(range.query);
    const values: Array<[number, string]> = [];
    for (const t of stepTimestamps(range)) {
      const value = answerAt(rule, t);
      if (isPlainObject(value)) {
        this.executionError(res, value.error);
        return;
      }
      if (value !== null) values.push([t / 1000, formatSample(value)]);
    }
    const result =
      values.length === 0 ? [] : [{ metric: { ...rule!.match }, values }];
    this.send(res, 200, {
      status: 'success',
      data: { resultType: 'matrix', result },
    });
  }

  private executionError(res: ServerResponse, error: string) {
    this.send(res, 422, { status: 'error', errorType: 'execution', error });
  }
}
