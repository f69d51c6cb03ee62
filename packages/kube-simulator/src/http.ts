/**
 * The HTTP side of the KubeSimulator: its listener (HTTP/2 offered by ALPN beside HTTP/1.1, as
 * kube-apiserver does) with the connections and timers it must end on close, and reading and
 * answering requests.
 */
import { timingSafeEqual } from 'node:crypto';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';

import { errors } from './errors';
import { listenLocally } from './listen';

const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** What an answer is made of: a status, and a JSON body or a plain text. */
export interface Reply {
  status: number;
  body?: unknown;
  text?: string;
}

/**
 * A listener on 127.0.0.1:`port` (0: a free one) with the TLS certificate; HTTP/1.1 only when
 * `http2` is false. Resolves once it listens, with the port it got.
 */
export async function listen(options: {
  port: number;
  http2: boolean;
  certPem: string;
  keyPem: string;
}): Promise<{ server: Http2SecureServer; port: number }> {
  const { certPem: cert, keyPem: key, port } = options;
  // kube-apiserver speaks HTTP/2 (offered by ALPN) and HTTP/1.1: a client-go watches over one
  // HTTP/2 connection per server, many streams on it (up to 1,000 streams per connection, the
  // server's --http2-max-streams-per-connection default); clients that offer no ALPN get 1.1.
  const server = !options.http2
    ? (createHttpsServer({ cert, key }) as unknown as Http2SecureServer)
    : createSecureServer({
        cert,
        key,
        allowHTTP1: true,
        settings: { maxConcurrentStreams: 1000 },
      });
  // HTTP/1.1 connections are served by node:http's machinery with these settings.
  const http1 = server as unknown as {
    requestTimeout: number;
    headersTimeout: number;
    keepAliveTimeout: number;
  };
  // Requests in 'timeout' mode are held on purpose: no server-side timeouts.
  http1.requestTimeout = 0;
  http1.headersTimeout = 60_000;
  // kube-apiserver keeps an idle connection 90 s (its http.Server IdleTimeout): clients that
  // pool connections see the same reuse here as against a real API server.
  http1.keepAliveTimeout = 90_000;
  return { server, port: await listenLocally(server, port) };
}

/** Serves one request (HTTP/1.1 or HTTP/2, through node:http's interface). */
export type RequestHandler = (
  req: IncomingMessage,
  res: ServerResponse,
) => Promise<void>;

/**
 * A listening server and what it has open: sockets, HTTP/2 sessions and the timers of delayed
 * answers, all ended by `close()`.
 */
export class Listener {
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** TLS connections accepted since start. */
  tlsConnections = 0;

  /** The HTTP/2 sessions open now. */
  openSessions(): ServerHttp2Session[] {
    return [...this.sessions];
  }

  constructor(
    private readonly server: Http2SecureServer,
    onRequest: RequestHandler,
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('secureConnection', (socket: Socket) => {
      this.tlsConnections += 1;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('session', (session: ServerHttp2Session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
      session.on('error', () => undefined); // a client gone mid-stream
    });
    // HTTP/1.1 and HTTP/2 requests alike: the compatibility API of node:http2 gives both the
    // request and response interface of node:http.
    server.on(
      'request',
      (h2req: Http2ServerRequest, h2res: Http2ServerResponse) => {
        const req = h2req as unknown as IncomingMessage;
        const res = h2res as unknown as ServerResponse;
        onRequest(req, res).catch(err => {
          if (!res.headersSent && !res.destroyed) {
            send(
              res,
              500,
              errors
                .internal(`kube-simulator: ${(err as Error).message}`)
                .toStatus(),
            );
          }
        });
      },
    );
  }

  /** Resolves after `ms`, unless the listener is closed first (then never). */
  delay(ms: number): Promise<void> {
    return new Promise(done => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        done();
      }, ms);
      this.timers.add(timer);
    });
  }

  /**
   * Clears the timers, runs `beforeClose`, then closes the server and every open socket and
   * session (held requests included); resolves when the server is closed.
   */
  close(beforeClose: () => void): Promise<void> {
    return new Promise<void>(done => {
      for (const timer of this.timers) clearTimeout(timer);
      this.timers.clear();
      beforeClose();
      this.server.close(() => done());
      for (const socket of this.sockets) socket.destroy();
      this.sockets.clear();
      for (const session of this.sessions) session.destroy();
      this.sessions.clear();
      (
        this.server as { closeAllConnections?: () => void }
      ).closeAllConnections?.();
    });
  }
}

export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  text?: string,
) {
  if (res.destroyed || res.writableEnded) return;
  const payload = text ?? JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type':
      text !== undefined ? 'text/plain; charset=utf-8' : 'application/json',
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-cache, private',
  });
  res.end(payload);
}

/** The request body, or undefined when it is over the API server's 3 MiB limit. */
export function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () =>
      done(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)),
    );
    req.on('error', fail);
  });
}

/** Whether the request carries `Authorization: Bearer <token>`. */
export function authorized(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const m = header.match(/^Bearer\s+(.+)$/i);
  if (!m) return false;
  const given = Buffer.from(m[1].trim());
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
