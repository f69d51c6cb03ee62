import {
  connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
} from 'node:http2';
import type { Agent } from 'node:https';
import { STATUS_CODES } from 'node:http';
import { createInterface } from 'node:readline';
import type { SecureContext } from 'node:tls';
import type { KubeConfig } from '@kubernetes/client-node';

/** How long an HTTP/2 connection may be silent before it is pinged (client-go: ReadIdleTimeout 30 s). */
export const PING_INTERVAL_MS = 30_000;
/** A ping unanswered this long means the connection is dead (client-go: PingTimeout 15 s). */
export const PING_TIMEOUT_MS = 15_000;

type Query = Record<string, string | number | boolean | undefined>;

/** What `Watch.watch` of client-node gives: a handle to stop the watch. */
export interface WatchHandle {
  abort(): void;
}

/** The TLS options of a cluster's pooled agent (see `kubernetes/secureContexts.ts`). */
interface AgentTls {
  secureContext?: SecureContext;
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** The kubeconfig's headers for a request (a bearer token), as client-node sends them. */
async function headersOf(
  kubeConfig: KubeConfig,
): Promise<Record<string, string>> {
  const init = await kubeConfig.applyToFetchOptions({});
  const headers: Record<string, string> = {};
  new Headers(init.headers as HeadersInit).forEach((value, key) => {
    headers[key] = value;
  });
  return headers;
}

/** The server offers no HTTP/2: its watches go over HTTP/1.1 (client-node's `Watch`). */
export class Http2Unsupported extends Error {}

const noH2 = (error: { code?: string; message?: string }) =>
  error.code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL' ||
  /application protocol|ALPN/i.test(error.message ?? '');

/**
 * A cluster's watches as streams over one HTTP/2 connection (and its lists, see `list`, and
 * probes, see `get`), as client-go keeps them: a watch over HTTP/1.1 holds a TLS connection of its own for as long as it is open (about 80 KiB of
 * native memory each in Node, five per cluster), while streams on one connection cost a few
 * KiB each. The connection is made with the TLS context of the cluster's pooled agent (the
 * same CA, client certificate, server name and verification) and sends the kubeconfig's
 * headers (a bearer token) on each stream, as client-node would. A connection that stops
 * answering pings is closed, which ends its watches with an error (their reflectors watch
 * again); a rotated kubeconfig (another agent) gets a new connection, the old one closing once
 * its watches end. `Http2Unsupported` is thrown when the server does not speak HTTP/2.
 */
/** Receive windows: client-go's 4 MiB a stream, and 16 MiB for the connection's streams. */
const STREAM_WINDOW = 4 << 20;
const CONNECTION_WINDOW = 16 << 20;

export class Http2Watches {
  private session: Promise<ClientHttp2Session> | undefined;
  /** The connection once made (the one `session` resolved to), while it is the current one. */
  private open: ClientHttp2Session | undefined;
  private sessionAgent: Agent | undefined;
  private closed = false;

  constructor(
    private readonly connectTimeoutMs: number,
    private readonly ping = {
      idleMs: PING_INTERVAL_MS,
      timeoutMs: PING_TIMEOUT_MS,
    },
  ) {}

  /** Opens a watch; resolves once the server answered 200 (or calls `onDone` with its error). */
  async watch(
    kubeConfig: KubeConfig,
    agent: Agent,
    path: string,
    query: Query,
    onEvent: (type: string, object: any) => void,
    onDone: (error: unknown) => void,
  ): Promise<WatchHandle> {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('No currently active cluster');
    const url = new URL(cluster.server + path);
    url.searchParams.set('watch', 'true');
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers = await headersOf(kubeConfig);
    const session = await this.sessionFor(url.origin, agent);
    const stream = session.request({
      ...headers,
      accept: 'application/json',
      [constants.HTTP2_HEADER_PATH]: `${url.pathname}${url.search}`,
    });
    return this.follow(stream, onEvent, onDone);
  }

  /** Whether the connection is open and made with `agent` (the kubeconfig has not changed). */
  usable(agent: Agent): boolean {
    return (
      !!this.open &&
      !this.open.destroyed &&
      !this.open.closed &&
      this.sessionAgent === agent
    );
  }

  /**
   * A GET on the open connection (see `usable`): the parsed JSON. A status other than 2xx
   * rejects with `code` (and `body`) as client-node's errors do; no answer within `timeoutMs`
   * rejects with a `TimeoutError`, and the stream is cancelled.
   */
  async get(
    kubeConfig: KubeConfig,
    agent: Agent,
    path: string,
    timeoutMs: number,
  ): Promise<unknown> {
    const session = this.open;
    if (!session || !this.usable(agent))
      throw new Error('The connection of the watches is closed');
    return this.request(session, { kubeConfig, path, query: {}, timeoutMs });
  }

  /**
   * A list (a GET of a collection) on the cluster's connection, made now if there is none, as
   * client-go lists and watches over one connection: the parsed JSON, plain objects as the
   * server wrote them (client-node's list would build class instances and Dates, then the
   * cache copies them back to plain JSON). Errors as `get`'s; `Http2Unsupported` when the
   * server does not speak HTTP/2.
   */
  async list(
    kubeConfig: KubeConfig,
    agent: Agent,
    path: string,
    query: Query,
    timeoutMs: number,
  ): Promise<unknown> {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('No currently active cluster');
    // One deadline for the connection and the answer, as client-node's list had.
    const started = performance.now();
    const session = await this.sessionFor(
      new URL(cluster.server).origin,
      agent,
    );
    const left = Math.max(1, timeoutMs - (performance.now() - started));
    const body = await this.request(session, {
      kubeConfig,
      path,
      query,
      timeoutMs: left,
    });
    // Any JSON a 2xx answer holds is not a list: without items, the caller's cache would be
    // emptied by an answer it cannot read. Such an answer fails as a list that failed does.
    if (!Array.isArray((body as { items?: unknown } | null)?.items)) {
      throw new Error(`The answer to GET ${path} is not a list (no items)`);
    }
    return body;
  }

  private async request(
    session: ClientHttp2Session,
    asked: {
      kubeConfig: KubeConfig;
      path: string;
      query: Query;
      timeoutMs: number;
    },
  ): Promise<unknown> {
    const { kubeConfig, path, query, timeoutMs } = asked;
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('No currently active cluster');
    const url = new URL(cluster.server + path);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers = await headersOf(kubeConfig);
    const stream = session.request({
      ...headers,
      accept: 'application/json',
      [constants.HTTP2_HEADER_PATH]: `${url.pathname}${url.search}`,
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new Error(`No answer within ${timeoutMs} ms`);
        error.name = 'TimeoutError';
        stream.close(constants.NGHTTP2_CANCEL);
        reject(error);
      }, timeoutMs);
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on('response', h => {
        status = Number(h[constants.HTTP2_HEADER_STATUS]);
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', error => {
        clearTimeout(timer);
        reject(error);
      });
      // A stream reset or cut with its connection may close without an end: not left pending
      // (a list holds one of the fleet's start slots while it is). After an end, this is a no-op.
      stream.on('close', () => {
        clearTimeout(timer);
        reject(new Error(`HTTP/2 stream closed (code ${stream.rstCode})`));
      });
      stream.on('end', () => {
        clearTimeout(timer);
        const body = Buffer.concat(chunks).toString('utf8');
        if (status >= 200 && status < 300) {
          try {
            resolve(JSON.parse(body));
          } catch (error) {
            reject(error);
          }
          return;
        }
        const error = new Error(
          `HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim(),
        ) as Error & { code: number; body: string };
        error.code = status;
        error.body = body;
        reject(error);
      });
    });
  }

  /** Closes the connection; its watches end. */
  close(): void {
    this.closed = true;
    this.dropSession();
  }

  private follow(
    stream: ClientHttp2Stream,
    onEvent: (type: string, object: any) => void,
    onDone: (error: unknown) => void,
  ): Promise<WatchHandle> {
    let aborted = false;
    let done = false;
    const finish = (error: unknown) => {
      if (done || aborted) return;
      done = true;
      onDone(error);
    };
    const handle: WatchHandle = {
      abort: () => {
        aborted = true;
        if (!stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
      },
    };
    return new Promise<WatchHandle>((resolve, reject) => {
      let answered = false;
      // A server that takes the stream and never answers: closed, not left open on the
      // connection (each new try would add one).
      const unanswered = setTimeout(() => {
        reject(
          new Error(
            `HTTP/2 watch: no answer within ${this.connectTimeoutMs} ms`,
          ),
        );
        if (!stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
      }, this.connectTimeoutMs);
      unanswered.unref();
      stream.on('error', error => {
        if (!answered) reject(error);
        else finish(error);
      });
      stream.on('close', () => {
        clearTimeout(unanswered);
        if (!answered) {
          reject(new Error(`HTTP/2 stream closed (code ${stream.rstCode})`));
          return;
        }
        // A clean end is the server's timeout; a reset (the connection broke) is a failure.
        finish(
          stream.rstCode === constants.NGHTTP2_NO_ERROR
            ? null
            : new Error(`HTTP/2 stream reset (code ${stream.rstCode})`),
        );
      });
      stream.on('response', (responseHeaders: IncomingHttpHeaders) => {
        answered = true;
        clearTimeout(unanswered);
        const status = Number(responseHeaders[constants.HTTP2_HEADER_STATUS]);
        if (status !== 200) {
          // As client-node's Watch: the status as an error with its code (410 means list again).
          stream.resume();
          const error = new Error(
            STATUS_CODES[status] ?? 'Internal Server Error',
          ) as Error & { statusCode: number };
          error.statusCode = status;
          finish(error);
          stream.close(constants.NGHTTP2_CANCEL);
          resolve(handle);
          return;
        }
        const lines = createInterface({ input: stream, crlfDelay: Infinity });
        // readline repeats the stream's errors: the stream's own handler reports them
        lines.on('error', () => undefined);
        lines.on('line', line => {
          if (aborted || done || !line) return;
          let event: { type?: string; object?: unknown };
          try {
            event = JSON.parse(line);
          } catch {
            return; // as client-node: a line that does not parse is skipped
          }
          onEvent(String(event.type), event.object);
        });
        resolve(handle);
      });
    });
  }

  private dropSession() {
    const session = this.session;
    this.session = undefined;
    this.sessionAgent = undefined;
    this.open = undefined;
    session?.then(
      s => s.destroy(),
      () => undefined,
    );
  }

  /** The open connection made with `agent`, or a new one (shared by the watches opening now). */
  private sessionFor(
    origin: string,
    agent: Agent,
  ): Promise<ClientHttp2Session> {
    if (this.closed)
      return Promise.reject(new Error('The cluster is no longer watched'));
    if (this.session && this.sessionAgent === agent) return this.session;
    // Another agent: the kubeconfig or its certificates changed. The old connection closes
    // once its streams end (each reflector watches again on the new one).
    this.session?.then(
      s => s.close(),
      () => undefined,
    );
    const opening = this.connect(origin, agent);
    this.session = opening;
    this.sessionAgent = agent;
    this.open = undefined;
    const forget = () => {
      if (this.session === opening) {
        this.session = undefined;
        this.sessionAgent = undefined;
        this.open = undefined;
      }
    };
    // A failed or closed connection is not kept: the next watch makes another. Nor is one the
    // server is draining (GOAWAY): its open streams go on, but it takes no new ones.
    opening.then(s => {
      if (this.session === opening) this.open = s;
      s.once('close', forget);
      s.once('goaway', forget);
    }, forget);
    return opening;
  }

  private async connect(
    origin: string,
    agent: Agent,
  ): Promise<ClientHttp2Session> {
    const tlsOptions = (agent as unknown as { options: AgentTls }).options;
    const session = connect(origin, {
      // Flow control as client-go's: Node's default 64 KiB a stream and a connection would let
      // a remote cluster send 64 KiB a round trip, a large list's time out on a distant one.
      settings: { initialWindowSize: STREAM_WINDOW },
      secureContext: tlsOptions.secureContext,
      ...(tlsOptions.rejectUnauthorized === undefined
        ? {}
        : { rejectUnauthorized: tlsOptions.rejectUnauthorized }),
      ...(tlsOptions.servername ? { servername: tlsOptions.servername } : {}),
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new Error(
          `HTTP/2 connection to ${origin}: no answer within ${this.connectTimeoutMs} ms`,
        );
        session.destroy(error);
        reject(error);
      }, this.connectTimeoutMs);
      session.once('connect', () => {
        clearTimeout(timer);
        // The connect timeout may have destroyed the session already (a loaded event loop
        // runs the timer first): its window can no longer be set, and the promise is settled.
        if (session.destroyed) return;
        session.setLocalWindowSize(CONNECTION_WINDOW);
        resolve();
      });
      session.once('error', error => {
        clearTimeout(timer);
        reject(noH2(error) ? new Http2Unsupported(error.message) : error);
      });
    });
    // Later errors close the session: its streams end with an error of their own.
    session.on('error', () => undefined);
    if (session.alpnProtocol !== 'h2') {
      session.destroy();
      throw new Http2Unsupported(`${origin} did not agree to HTTP/2`);
    }
    session.unref();
    // As client-go's ReadIdleTimeout: a connection is pinged only once nothing has been read
    // from it for `ping.idleMs` (checked every quarter of it, so within 1.25 × idleMs). Each of
    // a cluster's five watches brings a bookmark about once a minute, so a connection with watches
    // on it is seldom silent that long; a silent one (watches stalled, or none) is pinged.
    let lastBytes = session.socket.bytesRead;
    let lastReadAt = Date.now();
    let pinging = false;
    const pinger = setInterval(() => {
      if (session.destroyed || session.closed) return;
      const bytes = session.socket?.bytesRead ?? lastBytes;
      const now = Date.now();
      if (bytes !== lastBytes) {
        lastBytes = bytes;
        lastReadAt = now;
      }
      if (pinging || now - lastReadAt < this.ping.idleMs) return;
      pinging = true;
      const deadline = setTimeout(() => {
        if (pinging) session.destroy(new Error('HTTP/2 ping unanswered'));
      }, this.ping.timeoutMs);
      deadline.unref();
      const sent = session.ping(error => {
        pinging = false;
        lastReadAt = Date.now();
        clearTimeout(deadline);
        if (error) session.destroy(error);
      });
      if (!sent) {
        pinging = false;
        clearTimeout(deadline);
      }
    }, this.ping.idleMs / 4);
    pinger.unref();
    session.once('close', () => clearInterval(pinger));
    return session;
  }
}
