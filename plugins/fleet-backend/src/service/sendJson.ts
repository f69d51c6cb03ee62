import type { Request, Response } from 'express';
import zlib from 'node:zlib';

/** Answers at least this long are worth compressing (the root router's threshold too). */
const MIN_GZIP_BYTES = 1024;
/** Up to this long, compressing in one synchronous step costs less than a stream (~25 µs). */
const MAX_SYNC_GZIP_BYTES = 64 * 1024;

/**
 * Sends a JSON answer, gzipping a small one here, in one synchronous step at level 1, rather than
 * through the root router's streaming compression: a zlib stream, its thread-pool hops and several
 * socket writes per answer cost more than the query behind an entity card's poll (measured in
 * docs/benchmarks.md). Larger answers are left to the streaming middleware, so that compressing
 * them never holds the event loop. ETags and 304s work as with `res.json`.
 */
export function sendJson(req: Request, res: Response, body: unknown): void {
  const json = Buffer.from(JSON.stringify(body));
  res.type('application/json');
  res.vary('Accept-Encoding');
  // The revalidation express does in res.send, done before compressing: a 304 costs no gzip and
  // carries no Content-Encoding. The ETag is express's (weak by default) of the JSON itself, the
  // same for both encodings, which a weak validator allows.
  const etag = req.app?.get('etag fn');
  if (etag && !res.get('ETag')) res.set('ETag', etag(json, 'utf8'));
  if (req.fresh) {
    res.status(304).end();
    return;
  }
  if (
    json.length >= MIN_GZIP_BYTES &&
    json.length <= MAX_SYNC_GZIP_BYTES &&
    req.acceptsEncodings('gzip', 'identity') === 'gzip'
  ) {
    res.setHeader('Content-Encoding', 'gzip');
    res.send(zlib.gzipSync(json, { level: 1 }));
    return;
  }
  res.send(json);
}
