import { PassThrough } from 'node:stream';
import { parseCgiHead, readCgiHead } from './cgi';

describe('parseCgiHead', () => {
  it('takes the status from the Status header and keeps the others', () => {
    expect(
      parseCgiHead(
        'Status: 404 Not Found\r\nContent-Type: text/plain\r\nX-A: 1\r\nX-A: 2',
      ),
    ).toEqual({
      status: 404,
      headers: { 'content-type': 'text/plain', 'x-a': ['1', '2'] },
    });
  });

  it('is 200 without a Status header, and 302 with only a Location', () => {
    expect(parseCgiHead('Content-Type: text/plain').status).toBe(200);
    expect(parseCgiHead('Location: /elsewhere').status).toBe(302);
  });
});

describe('readCgiHead', () => {
  async function bodyOf(stream: PassThrough): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    return Buffer.concat(chunks).toString();
  }

  it('reads headers split across chunks and leaves the body in the stream', async () => {
    const stream = new PassThrough();
    const head = readCgiHead(stream);
    stream.write('Status: 201 Created\nContent-Ty');
    stream.write('pe: text/plain\n\nbody ');
    stream.end('and more');
    expect(await head).toEqual({
      status: 201,
      headers: { 'content-type': 'text/plain' },
    });
    expect(await bodyOf(stream)).toBe('body and more');
  });

  it('resolves undefined when the output ends before a blank line', async () => {
    const stream = new PassThrough();
    const head = readCgiHead(stream);
    stream.end('Content-Type: text/plain\n');
    expect(await head).toBeUndefined();
  });
});
