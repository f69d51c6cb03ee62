/*
 * HTTP parts of the benchmarks: a POST that may take minutes, a closed-loop GET load (node:http
 * keep-alive, gzip like a browser) on a route, optionally spread over at least a given time, and a
 * browser's GET (its encodings, its HTTP cache's revalidation).
 */
import http from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { percentile } from '@cnp/fleet-harness';

/** A POST that may take minutes (fetch gives up on headers after 300 s). */
export function postLong(
  url: string,
  token: string,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  return new Promise(resolve => {
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(timeoutMs),
      },
      res => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', chunk => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', error => resolve({ status: 0, body: String(error) }));
      },
    );
    req.on('error', error => resolve({ status: 0, body: String(error) }));
    req.end();
  });
}

export interface RouteLoadResult {
  requests: number;
  errors: number;
  p95: number;
  durationMs: number;
}

/**
 * `requests` GETs from `clients` concurrent clients over keep-alive connections: request i of
 * `pathOf(i)`, answered 200 with a body `ok(body)` accepts. With `spreadOverMs`, the requests go
 * in bursts of `clients` at once, burst k not before k × clients × spreadOverMs / requests from
 * the start: the same count, as many in flight at a time, over (at least) that time, for a
 * backend that answers faster than the one it stands beside.
 */
export async function routeLoad(options: {
  base: string;
  token?: string;
  clients: number;
  requests: number;
  pathOf: (i: number) => string;
  ok: (body: string) => boolean;
  spreadOverMs?: number;
}): Promise<RouteLoadResult> {
  const agent = new http.Agent({
    keepAlive: true,
    maxSockets: options.clients,
  });
  const latencies: number[] = [];
  let issued = 0;
  let errors = 0;
  const get = (url: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.get(
        url,
        {
          agent,
          headers: {
            ...(options.token
              ? { Authorization: `Bearer ${options.token}` }
              : {}),
            'Accept-Encoding': 'gzip',
          },
          signal: AbortSignal.timeout(30_000),
        },
        res =>
          decodedBody(res).then(
            body => resolve({ status: res.statusCode ?? 0, body }),
            reject,
          ),
      );
      req.on('error', reject);
    });
  const started = Date.now();
  const deadline = started + Math.max(300_000, 2 * (options.spreadOverMs ?? 0));
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
      while (issued < options.requests && Date.now() < deadline) {
        const i = issued++;
        if (options.spreadOverMs) {
          // In bursts of `clients`: as many in flight at once as the load it stands beside.
          const burst = i - (i % options.clients);
          const at =
            started + (burst * options.spreadOverMs) / options.requests;
          if (at > Date.now())
            await new Promise(r => setTimeout(r, at - Date.now()));
        }
        const t = performance.now();
        try {
          const res = await get(`${options.base}${options.pathOf(i)}`);
          latencies.push(performance.now() - t);
          if (res.status !== 200 || !options.ok(res.body)) errors += 1;
        } catch {
          errors += 1;
        }
      }
    }),
  );
  agent.destroy();
  return {
    requests: latencies.length,
    errors,
    p95: percentile(latencies, 95),
    durationMs: Date.now() - started,
  };
}

const DECODERS: Record<string, (raw: Buffer) => Buffer> = {
  gzip: gunzipSync,
  br: brotliDecompressSync,
  deflate: inflateSync,
};

/** An answer's body, decoded as its Content-Encoding says, as text. */
function decodedBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => {
      const raw = Buffer.concat(chunks);
      const decode = DECODERS[res.headers['content-encoding'] ?? ''];
      resolve((decode ? decode(raw) : raw).toString('utf8'));
    });
    res.on('error', reject);
  });
}

/**
 * A GET like a browser's (gzip, deflate or br; with `etag`, If-None-Match as its HTTP cache
 * sends it; a 304 has no body) over `agent`, authenticated with `token`.
 */
export function browserGetter(agent: http.Agent, token: string) {
  const browserHeaders = {
    Authorization: `Bearer ${token}`,
    'Accept-Encoding': 'gzip, deflate, br',
    Accept: 'application/json',
  };
  return (url: string, etag?: string) =>
    new Promise<{ status: number; body: string; etag?: string }>(
      (resolve, reject) => {
        const req = http.get(
          url,
          {
            agent,
            headers: etag
              ? { ...browserHeaders, 'If-None-Match': etag }
              : browserHeaders,
            signal: AbortSignal.timeout(30_000),
          },
          res =>
            decodedBody(res).then(
              body =>
                resolve({
                  status: res.statusCode ?? 0,
                  body,
                  etag: res.headers.etag,
                }),
              reject,
            ),
        );
        req.on('error', reject);
      },
    );
}

/**
 * Starts a process whose fork reads `process.env` at once (the harness's simulator: `start`
 * forks before its first await) with `--max-old-space-size=<heapMiB>` added to its NODE_OPTIONS,
 * and only its: this process's own NODE_OPTIONS are put back before anything else runs.
 */
export function withHeap<T>(
  heapMiB: number | undefined,
  start: () => Promise<T>,
): Promise<T> {
  if (!heapMiB) return start();
  const saved = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${
    saved ?? ''
  } --max-old-space-size=${heapMiB}`.trim();
  try {
    return start();
  } finally {
    if (saved === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved;
  }
}
