import { Readable } from 'node:stream';

/** The header block of a CGI answer (RFC 3875 section 6). */
export interface CgiHead {
  status: number;
  headers: Record<string, string | string[]>;
}

const MAX_HEAD_BYTES = 64 * 1024;

/** Parses a CGI header block: `Name: value` lines, `Status: 404 Not Found` among them. */
export function parseCgiHead(text: string): CgiHead {
  const headers: Record<string, string | string[]> = {};
  let status = 200;
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'status') {
      status = Number.parseInt(value, 10) || 502;
    } else if (headers[name] === undefined) {
      headers[name] = value;
    } else {
      headers[name] = [headers[name], value].flat();
    }
  }
  if (headers.location && status === 200) status = 302;
  return { status, headers };
}

/**
 * Reads a CGI program's output up to the blank line that ends its headers,
 * then pauses the stream and puts the start of the body back, so the body
 * can be piped on. Resolves `undefined` when the output ends, or grows past
 * 64 KiB, before a header block.
 */
export function readCgiHead(stream: Readable): Promise<CgiHead | undefined> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const done = (head: CgiHead | undefined) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      resolve(head);
    };
    function onData(chunk: Buffer) {
      buffered = Buffer.concat([buffered, chunk]);
      const crlf = buffered.indexOf('\r\n\r\n');
      const lf = buffered.indexOf('\n\n');
      const candidates = [
        crlf >= 0 ? { at: crlf, length: 4 } : undefined,
        lf >= 0 ? { at: lf, length: 2 } : undefined,
      ].filter(c => c !== undefined);
      if (candidates.length === 0) {
        if (buffered.length > MAX_HEAD_BYTES) done(undefined);
        return;
      }
      const end = candidates.reduce((a, b) => (a.at <= b.at ? a : b));
      stream.pause();
      const rest = buffered.subarray(end.at + end.length);
      if (rest.length > 0) stream.unshift(rest);
      done(parseCgiHead(buffered.subarray(0, end.at).toString('latin1')));
    }
    function onEnd() {
      done(undefined);
    }
    function onError(error: Error) {
      stream.off('data', onData);
      stream.off('end', onEnd);
      reject(error);
    }
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
  });
}
