import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  constants as http2Constants,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from 'node:http2';

/**
 * Drops the connection a request came on, unanswered (a cluster that is down): the TCP
 * connection for HTTP/1.1; for HTTP/2 the whole session, every stream on it with it, as when
 * the server's connection breaks.
 */
export function dropConnection(req: IncomingMessage): void {
  const stream = (req as unknown as Partial<Http2ServerRequest>).stream;
  if (stream) stream.session?.destroy();
  else req.socket.destroy();
}

/** Resets one response: its stream for HTTP/2 (RST_STREAM), its connection for HTTP/1.1. */
export function resetResponse(res: ServerResponse): void {
  const stream = (res as unknown as Partial<Http2ServerResponse>).stream;
  if (stream) {
    if (stream.destroyed) return;
    stream.on('error', () => undefined); // closing with an error code emits it here too
    stream.close(http2Constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  res.socket?.destroy();
  res.destroy();
}

/** The connection a response goes over: its HTTP/2 session, or its HTTP/1.1 socket. */
export function connectionOf(res: ServerResponse): object | undefined {
  const stream = (res as unknown as Partial<Http2ServerResponse>).stream;
  return stream ? stream.session : res.socket ?? undefined;
}
