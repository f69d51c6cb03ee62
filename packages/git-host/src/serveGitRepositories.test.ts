import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { createExampleRepository } from './createExampleRepository';
import {
  GitRepositoryServer,
  serveGitRepositories,
} from './serveGitRepositories';

jest.setTimeout(60_000);

const execFileAsync = promisify(execFile);

/** The git command line with no user configuration, as CI has none. */
function git(args: string[], cwd: string) {
  return execFileAsync('git', args, {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.com',
    },
  });
}

describe('serveGitRepositories', () => {
  let tmp: string;
  let root: string;
  let server: GitRepositoryServer;
  let v1: string;
  let v2: string;

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'git-host-serve-'));
    root = path.join(tmp, 'repos');
    v1 = await createExampleRepository({
      root,
      name: 'team/inventory',
      files: { 'deploy/a.yaml': 'a: 1\n' },
      message: 'Version 1',
      tag: 'v1',
    });
    v2 = await createExampleRepository({
      root,
      name: 'team/inventory',
      files: { 'deploy/a.yaml': 'a: 2\n', 'deploy/b.yaml': 'b: 1\n' },
      message: 'Version 2',
    });
    server = await serveGitRepositories({ root });
  });

  afterAll(async () => {
    await server?.close();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('binds the loopback address on a random port', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toMatch(/:0$/);
  });

  it.each([['0'], ['1'], ['2']])(
    'serves a clone to the git command line over protocol v%s',
    async version => {
      const dest = path.join(tmp, `clone-v${version}`);
      await git(
        [
          '-c',
          `protocol.version=${version}`,
          'clone',
          '--quiet',
          `${server.url}/team/inventory.git`,
          dest,
        ],
        tmp,
      );
      expect(
        (await git(['rev-parse', 'HEAD', 'v1^{commit}'], dest)).stdout.split(
          '\n',
        ),
      ).toEqual([v2, v1, '']);
      expect(await fs.readFile(path.join(dest, 'deploy/b.yaml'), 'utf8')).toBe(
        'b: 1\n',
      );
    },
  );

  it('answers the ref advertisement with the CGI status and content type', async () => {
    const response = await fetch(
      `${server.url}/team/inventory.git/info/refs?service=git-upload-pack`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(
      'application/x-git-upload-pack-advertisement',
    );
    expect(await response.text()).toContain(`${v2} refs/heads/main`);
  });

  it('passes the Git-Protocol header on, so a v2 client gets a v2 advertisement', async () => {
    const response = await fetch(
      `${server.url}/team/inventory.git/info/refs?service=git-upload-pack`,
      { headers: { 'git-protocol': 'version=2' } },
    );
    expect(await response.text()).toContain('000eversion 2\n');
  });

  it('streams a gzip upload-pack request to the backend and a pack back', async () => {
    const body = gzipSync(`0032want ${v1}\n00000009done\n`);
    const response = await fetch(
      `${server.url}/team/inventory.git/git-upload-pack`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/x-git-upload-pack-request',
          'content-encoding': 'gzip',
        },
        body,
      },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(
      'application/x-git-upload-pack-result',
    );
    const answer = Buffer.from(await response.arrayBuffer());
    expect(answer.subarray(0, 8).toString()).toBe('0008NAK\n');
    expect(answer.indexOf('PACK')).toBe(8);
  });

  it('refuses a push with 403, over HTTP and from the git command line', async () => {
    const response = await fetch(
      `${server.url}/team/inventory.git/info/refs?service=git-receive-pack`,
    );
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('read-only');
    const post = await fetch(
      `${server.url}/team/inventory.git/git-receive-pack`,
      {
        method: 'POST',
        body: '0000',
      },
    );
    expect(post.status).toBe(403);

    const dest = path.join(tmp, 'push');
    await git(
      ['clone', '--quiet', `${server.url}/team/inventory.git`, dest],
      tmp,
    );
    await fs.writeFile(path.join(dest, 'x.yaml'), 'x: 1\n');
    await git(['add', '.'], dest);
    await git(['commit', '--quiet', '-m', 'x'], dest);
    await expect(
      git(['push', 'origin', 'HEAD:refs/heads/main'], dest),
    ).rejects.toThrow(/403/);
    const heads = await git(
      ['ls-remote', `${server.url}/team/inventory.git`, 'main'],
      tmp,
    );
    expect(heads.stdout).toContain(v2);
  });

  it('refuses a ref advertisement when any service parameter is not upload-pack', async () => {
    // git http-backend takes the last `service` value, so every one counts.
    for (const query of [
      'service=git-upload-pack&service=git-receive-pack',
      'service=git-receive-pack&service=git-upload-pack',
      'service=git-upload-pack&%73ervice=git-receive-pack',
    ]) {
      const response = await fetch(
        `${server.url}/team/inventory.git/info/refs?${query}`,
      );
      expect({ query, status: response.status }).toEqual({
        query,
        status: 403,
      });
      expect(await response.text()).toContain('read-only');
    }
  });

  it('answers 404 for a repository that does not exist, and for a path that is no Git endpoint', async () => {
    const missing = await fetch(
      `${server.url}/nothing.git/info/refs?service=git-upload-pack`,
    );
    expect(missing.status).toBe(404);
    const escape = await fetch(
      `${server.url}/%2E%2E/repos/team/inventory.git/info/refs`,
    );
    expect(escape.status).toBe(404);
    const other = await fetch(
      `${server.url}/team/inventory.git/blob/main/deploy`,
    );
    expect(other.status).toBe(404);
    await expect(
      git(
        [
          'clone',
          '--quiet',
          `${server.url}/nothing.git`,
          path.join(tmp, 'nothing'),
        ],
        tmp,
      ),
    ).rejects.toThrow(/not found|404/i);
  });

  it.each([
    [
      'an encoded .. leaving the root',
      '/team/inventory.git%2F..%2F..%2F..%2Fetc',
    ],
    [
      'an encoded .. that lands on a repository',
      '/team/inventory.git%2F..%2Finventory.git',
    ],
    ['an encoded . segment', '/team/.%2Finventory.git'],
    ['an encoded empty segment', '/team%2F%2Finventory.git'],
    ['an encoded NUL', '/team/inventory.git%00'],
  ])('answers 404 for a repository path with %s', async (_, repository) => {
    const response = await fetch(
      `${server.url}${repository}/info/refs?service=git-upload-pack`,
    );
    expect(response.status).toBe(404);
    expect(await response.text()).toMatch(/^Not a Git repository path: /);
  });

  it('decodes the path before the read-only check, as Git does', async () => {
    const response = await fetch(
      `${server.url}/team/inventory.git/git%2Dreceive-pack`,
      { method: 'POST', body: '0000' },
    );
    expect(response.status).toBe(403);
    const encoded = await fetch(
      `${server.url}/team%2Finventory.git/info/refs?service=git-upload-pack`,
    );
    expect(encoded.status).toBe(200);
  });

  it('answers 400 naming the path for a malformed percent-escape', async () => {
    const response = await fetch(`${server.url}/%E0%A4%A/info/refs`);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(
      'Malformed percent-escape in the request path: /%E0%A4%A/info/refs\n',
    );
  });

  it('answers 502 naming the cause when the CGI program fails, and keeps serving', async () => {
    const broken = path.join(tmp, 'broken-cgi');
    await fs.writeFile(
      broken,
      '#!/bin/sh\necho "cannot start: boom" >&2\nexit 3\n',
      {
        mode: 0o755,
      },
    );
    const brokenServer = await serveGitRepositories({
      root,
      httpBackend: broken,
    });
    const absent = await serveGitRepositories({
      root,
      httpBackend: path.join(tmp, 'no-such-program'),
    });
    try {
      const url = '/team/inventory.git/info/refs?service=git-upload-pack';
      const first = await fetch(`${brokenServer.url}${url}`);
      expect(first.status).toBe(502);
      expect(await first.text()).toMatch(
        /no CGI headers \(exit code 3\): cannot start: boom/,
      );
      const second = await fetch(`${absent.url}${url}`);
      expect(second.status).toBe(502);
      expect(await second.text()).toContain('no-such-program');
      const again = await fetch(`${brokenServer.url}${url}`);
      expect(again.status).toBe(502);
    } finally {
      await brokenServer.close();
      await absent.close();
    }
  });
});
