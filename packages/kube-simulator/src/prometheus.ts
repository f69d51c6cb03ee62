/**
 * A Prometheus query endpoint for canary analysis, on its own plain-HTTP
 * listener on 127.0.0.1 (Prometheus is usually plain HTTP inside a cluster).
 *
 * It serves the instant-query API in the real Prometheus format:
 *   GET  /api/v1/query?query=<promql>&time=<unix seconds | RFC 3339>
 *   POST /api/v1/query   (application/x-www-form-urlencoded)
 *   → 200 {"status":"success","data":{"resultType":"vector","result":[{"metric":{...},"value":[<t>,"<v>"]}]}}
 *   → 400 {"status":"error","errorType":"bad_data","error":"..."} without a query
 *   → 422 {"status":"error","errorType":"execution","error":"..."} for an error rule
 *   GET  /-/healthy, /-/ready
 *
 * It cannot evaluate PromQL. It extracts the equality label matchers
 * (`name="value"`, not `!=`, `=~`, `!~`) from the query text and answers from
 * rules: the rule with the most labels, all of which equal a matcher of the
 * query, wins (a later rule wins a tie); no rule gives an empty vector.
 */
import {
  createServer,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import { listenLocally } from './listen';
import { isPlainObject } from './util';

/** A number, `null` for an empty vector, or an error Prometheus answers with (422, execution). */
export type PrometheusValue =
  | number
  | 'NaN'
  | '+Inf'
  | '-Inf'
  | null
  | { error: string };

export interface PrometheusRule {
  match: Record<string, string>;
  value: PrometheusValue;
}

export type PrometheusFaultMode = 'ok' | 'down';

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

export function parseRule(input: unknown): PrometheusRule | string {
  if (!isPlainObject(input) || !isPlainObject(input.match))
    return 'expected {"match":{"label":"value",...},"value":number|null|{"error":"..."}}';
  for (const [k, v] of Object.entries(input.match)) {
    if (typeof v !== 'string') return `match.${k} must be a string`;
  }
  const value = input.value;
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
    match: { ...(input.match as Record<string, string>) },
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

  setRule(match: Record<string, string>, value: PrometheusValue): void {
    const parsed = parseRule({ match, value });
    if (typeof parsed === 'string') throw new Error(parsed);
    const key = JSON.stringify(Object.entries(parsed.match).sort());
    this.rules = this.rules.filter(
      r => JSON.stringify(Object.entries(r.match).sort()) !== key,
    );
    this.rules.push(parsed);
  }

  clearRules(): void {
    this.rules = [];
  }

  listRules(): PrometheusRule[] {
    return this.rules.map(r => ({ match: { ...r.match }, value: r.value }));
  }

  setFault(mode: PrometheusFaultMode): void {
    if (mode !== 'ok' && mode !== 'down')
      throw new Error(
        `invalid Prometheus fault mode ${JSON.stringify(mode)}: "ok" or "down"`,
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
    if (url.pathname === '/-/healthy' || url.pathname === '/-/ready') {
      const text =
        url.pathname === '/-/healthy'
          ? 'Prometheus Server is Healthy.\n'
          : 'Prometheus Server is Ready.\n';
      this.send(res, 200, undefined, text);
      return;
    }
    if (url.pathname !== '/api/v1/query') {
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
    const query = params.get('query') ?? '';
    const badData = (error: string) =>
      this.send(res, 400, { status: 'error', errorType: 'bad_data', error });
    const time = parseTime(params.get('time'));
    if (time === 'bad') {
      badData(
        `invalid parameter "time": cannot parse "${params.get(
          'time',
        )}" to a valid timestamp`,
      );
      return;
    }
    if (!query.trim()) {
      badData(
        'invalid parameter "query": 1:1: parse error: no expression found in input',
      );
      return;
    }
    this.queries.push(query);
    if (this.queries.length > 10_000)
      this.queries.splice(0, this.queries.length - 10_000);
    const at = time ?? Date.now() / 1000;
    const rule = this.ruleFor(query);
    const value = rule?.value ?? null;
    if (isPlainObject(value)) {
      this.send(res, 422, {
        status: 'error',
        errorType: 'execution',
        error: value.error,
      });
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
}
