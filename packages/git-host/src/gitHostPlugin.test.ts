import { urlReaderServiceFactory } from '@backstage/backend-defaults/urlReader';
import {
  mockCredentials,
  mockServices,
  ServiceFactoryTester,
  startTestBackend,
} from '@backstage/backend-test-utils';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createInventoryRepository } from './createInventoryRepository';
import { gitHostPlugin } from './gitHostPlugin';
import { gitHostUrlReaderFactory } from './gitHostUrlReaderFactory';

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
      GIT_TERMINAL_PROMPT: '0',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.com',
    },
  });
}

/** A request carrying no Backstage credentials, as a Git client sends. */
const UNAUTHENTICATED = `Authorization: ${mockCredentials.none.header()}`;

async function startBackend(data: object) {
  const { server } = await startTestBackend({
    features: [gitHostPlugin, mockServices.rootConfig.factory({ data })],
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('gitHostPlugin', () => {
  let tmp: string;
  let root: string;
  let commits: { v1: string; v2: string };

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'git-host-plugin-'));
    root = path.join(tmp, 'repos');
    commits = await createInventoryRepository({ root });
  });

  afterAll(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  describe('with fleet.gitHost.serve.root', () => {
    let backend: string;

    beforeAll(async () => {
      backend = await startBackend({
        fleet: { gitHost: { serve: { root } } },
      });
    });

    it('serves a clone to the git command line, with no Backstage credentials', async () => {
      const dest = path.join(tmp, 'clone');
      await git(
        [
          '-c',
          `http.extraHeader=${UNAUTHENTICATED}`,
          'clone',
          '--quiet',
          `${backend}/api/githost/inventory.git`,
          dest,
        ],
        tmp,
      );
      const { stdout } = await git(
        ['rev-parse', 'HEAD', 'v1^{commit}', 'v2^{commit}', 'origin/next'],
        dest,
      );
      expect(stdout.trim().split('\n')).toEqual([
        commits.v1,
        commits.v1,
        commits.v2,
        commits.v2,
      ]);
      await expect(fs.readdir(path.join(dest, 'deploy'))).resolves.toContain(
        'configmap.yaml',
      );
    });

    it('is read by the Git host URL reader at its /api/githost base', async () => {
      const reader = await ServiceFactoryTester.from(urlReaderServiceFactory, {
        dependencies: [
          gitHostUrlReaderFactory,
          mockServices.rootConfig.factory({
            data: {
              fleet: {
                gitHost: {
                  baseUrl: `${backend}/api/githost`,
                  cacheDir: path.join(tmp, 'cache'),
                },
              },
            },
          }),
        ],
      }).getSubject();
      const response = await reader.readTree(
        `${backend}/api/githost/inventory.git/tree/v2/deploy`,
      );
      expect(response.etag).toBe(commits.v2);
      expect((await response.files()).map(f => f.path).sort()).toEqual([
        'deployment.yaml',
        'job.yaml',
        'service.yaml',
        'serviceaccount.yaml',
      ]);
    });

    it('refuses a push with 403, over HTTP and from the git command line', async () => {
      const refs = await fetch(
        `${backend}/api/githost/inventory.git/info/refs?service=git-receive-pack`,
        { headers: { authorization: mockCredentials.none.header() } },
      );
      expect(refs.status).toBe(403);
      expect(await refs.text()).toContain('read-only');
      const post = await fetch(
        `${backend}/api/githost/inventory.git/git-receive-pack`,
        { method: 'POST', body: '0000' },
      );
      expect(post.status).toBe(403);

      const dest = path.join(tmp, 'push');
      await git(
        ['clone', '--quiet', `${backend}/api/githost/inventory.git`, dest],
        tmp,
      );
      await fs.writeFile(path.join(dest, 'deploy', 'extra.yaml'), 'a: 1\n');
      await git(['add', '--all'], dest);
      await git(['commit', '--quiet', '-m', 'Pushed'], dest);
      await expect(
        git(['push', '--quiet', 'origin', 'HEAD:main'], dest),
      ).rejects.toThrow(/403/);
      const { stdout } = await git(
        ['--git-dir', path.join(root, 'inventory.git'), 'rev-parse', 'main'],
        tmp,
      );
      expect(stdout.trim()).toBe(commits.v1);
    });

    it('answers 404 for a repository that does not exist', async () => {
      const response = await fetch(
        `${backend}/api/githost/missing.git/info/refs?service=git-upload-pack`,
      );
      expect(response.status).toBe(404);
    });
  });

  it('registers no route without fleet.gitHost.serve.root', async () => {
    const backend = await startBackend({
      fleet: { gitHost: { baseUrl: 'http://127.0.0.1:1' } },
    });
    // A push would be refused with 403 by the Git host; with none, no route answers.
    const push = await fetch(
      `${backend}/api/githost/inventory.git/info/refs?service=git-receive-pack`,
    );
    expect(push.status).toBe(404);
    const clone = await fetch(
      `${backend}/api/githost/inventory.git/info/refs?service=git-upload-pack`,
    );
    expect(clone.status).toBe(404);
  });

  it('stops the backend with a clear error when the root is no folder', async () => {
    await expect(
      startBackend({
        fleet: { gitHost: { serve: { root: path.join(tmp, 'nowhere') } } },
      }),
    ).rejects.toThrow(/fleet\.gitHost\.serve\.root must name a folder/);
  });
});
