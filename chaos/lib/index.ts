/*
 * What the chaos scenarios share: checks that are recorded (not thrown) so the table can say
 * what held, the in-process simulator, and a Fleet backend process reached over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type BackendProcess,
  onCleanup,
  startBackendProcess,
  type TempDatabase,
} from '@cnp/fleet-harness';

export interface CheckResult {
  ok: boolean;
  text: string;
}

/** A scenario's checks: each one is recorded with its outcome; the scenario holds if all do. */
export class Checks {
  readonly results: CheckResult[] = [];

  ok(condition: boolean, text: string, detail?: unknown): boolean {
    this.results.push({
      ok: condition,
      text:
        condition || detail === undefined
          ? text
          : `${text} (got ${short(detail)})`,
    });
    return condition;
  }

  equal<T>(actual: T, expected: T, text: string): boolean {
    const same = JSON.stringify(actual) === JSON.stringify(expected);
    return this.ok(same, text, same ? undefined : actual);
  }

  get held(): boolean {
    return this.results.length > 0 && this.results.every(r => r.ok);
  }
}

export function short(value: unknown, max = 160): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text === undefined
    ? String(value)
    : text.length > max
    ? `${text.slice(0, max)}…`
    : text;
}

export interface ScenarioContext {
  checks: Checks;
  log: (line: string) => void;
  /** A fresh PostgreSQL database for this scenario (dropped at the end). */
  db: TempDatabase;
  /** A temporary directory for this scenario (removed at the end). */
  tmp: string;
}

export interface Scenario {
  id: string;
  title: string;
  /** One line: what was tried. */
  tried: string;
  timeoutMs: number;
  run(ctx: ScenarioContext): Promise<void>;
}

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The simulators of the chaos suite: workloads become ready 50 ms after a change. */
export const CHAOS_READY_DELAY_MS = 50;

export interface HttpAnswer {
  status: number;
  text: string;
  json: any;
}

export interface FleetHttp {
  backend: BackendProcess;
  token: string;
  /** A caller allowed to deploy but not to administer clusters (`Authorization` header value). */
  guestAuthorization: string;
  /** Every answer received, for checks over all of them (no 500, no secrets). */
  answers: Array<{
    method: string;
    path: string;
    status: number;
    text: string;
  }>;
  call(
    method: string,
    pathAndQuery: string,
    body?: unknown,
    options?: { headers?: Record<string, string>; raw?: boolean },
  ): Promise<HttpAnswer>;
}

/**
 * A Backstage backend with the Fleet plugin, in its own process (bench/lib/backendChild.ts):
 * real auth (static token), real scheduler (the health task runs at startup), PostgreSQL.
 */
export async function startFleetBackend(options: {
  db: TempDatabase;
  kubeconfigDir: string;
  fleet?: Record<string, unknown>;
  logFile: string;
  token?: string;
  /** The port to listen on (default: a free one). */
  port?: number;
  /** A file of catalog entities: the backend runs Backstage's catalog reading it. */
  catalogFile?: string;
}): Promise<FleetHttp> {
  const token = options.token ?? randomBytes(24).toString('hex');
  const guestToken = randomBytes(24).toString('hex');
  const backend = await startBackendProcess(
    {
      FLEET_BENCH_GUEST_TOKEN: guestToken,
      FLEET_BENCH_DB: options.db.connection,
      FLEET_BENCH_KUBECONFIG_DIR: options.kubeconfigDir,
      FLEET_BENCH_TOKEN: token,
      FLEET_BENCH_FLEET: JSON.stringify(options.fleet ?? {}),
      LOG_LEVEL: process.env.FLEET_CHAOS_VERBOSE ? 'info' : 'warn',
      ...(options.port ? { FLEET_BENCH_PORT: String(options.port) } : {}),
      ...(options.catalogFile
        ? { FLEET_BENCH_CATALOG_FILE: options.catalogFile }
        : {}),
    },
    { logFile: options.logFile },
  );
  onCleanup(() => backend.kill());
  const answers: FleetHttp['answers'] = [];
  const call: FleetHttp['call'] = async (
    method,
    pathAndQuery,
    body,
    callOptions = {},
  ) => {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${token}`,
      ...callOptions.headers,
    };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = callOptions.raw ? String(body) : JSON.stringify(body);
      if (!Object.keys(headers).some(h => h.toLowerCase() === 'content-type'))
        headers['Content-Type'] = 'application/json';
    }
    for (const [k, v] of Object.entries(headers))
      if (v === '') delete headers[k];
    const res = await fetch(`${backend.base}${pathAndQuery}`, {
      method,
      headers,
      body: payload,
      signal: AbortSignal.timeout(150_000),
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    answers.push({
      method,
      path: pathAndQuery.slice(0, 200),
      status: res.status,
      text,
    });
    return { status: res.status, text, json };
  };
  return {
    backend,
    token,
    guestAuthorization: `Bearer ${guestToken}`,
    answers,
    call,
  };
}

/** Polls `fn` until it returns a value other than undefined, at most `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise(r => setTimeout(r, 200));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${
      last ? `: ${(last as Error).message}` : ''
    }`,
  );
}
