import { urlReaderServiceFactory } from '@backstage/backend-defaults/urlReader';
import { UrlReaderService } from '@backstage/backend-plugin-api';
import {
  mockServices,
  ServiceFactoryTester,
} from '@backstage/backend-test-utils';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createInventoryRepository } from './createInventoryRepository';
import { gitHostUrlReaderFactory } from './gitHostUrlReaderFactory';
import {
  GitRepositoryServer,
  serveGitRepositories,
} from './serveGitRepositories';

jest.setTimeout(60_000);

const EXAMPLES = path.resolve(__dirname, '../../../examples/repositories');

/** The plain files of one version's `deploy/` folder in the examples. */
async function exampleFiles(version: string) {
  const dir = path.join(EXAMPLES, 'inventory', version, 'deploy');
  const names = (await fs.readdir(dir)).sort();
  return Object.fromEntries(
    await Promise.all(
      names.map(async name => [
        name,
        await fs.readFile(path.join(dir, name), 'utf8'),
      ]),
    ),
  );
}

async function filesOf(reader: UrlReaderService, url: string) {
  const response = await reader.readTree(url);
  const files = await response.files();
  const entries = await Promise.all(
    files.map(async file => [file.path, (await file.content()).toString()]),
  );
  return { etag: response.etag, files: Object.fromEntries(entries.sort()) };
}

describe('createInventoryRepository', () => {
  let tmp: string;
  let root: string;
  let server: GitRepositoryServer;
  let reader: UrlReaderService;
  let commits: { v1: string; v2: string };
  let base: string;

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'git-host-inventory-'));
    root = path.join(tmp, 'repos');
    commits = await createInventoryRepository({ root });
    server = await serveGitRepositories({ root });
    base = `${server.url}/inventory.git`;
    reader = await ServiceFactoryTester.from(urlReaderServiceFactory, {
      dependencies: [
        gitHostUrlReaderFactory,
        mockServices.rootConfig.factory({
          data: {
            fleet: {
              gitHost: {
                baseUrl: server.url,
                cacheDir: path.join(tmp, 'cache'),
              },
            },
          },
        }),
      ],
    }).getSubject();
  });

  afterAll(async () => {
    await server?.close();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('holds two versions of the example manifests', async () => {
    const v1 = await exampleFiles('v1');
    const v2 = await exampleFiles('v2');
    expect(Object.keys(v1)).toEqual([
      'configmap.yaml',
      'deployment.yaml',
      'service.yaml',
      'serviceaccount.yaml',
    ]);
    expect(Object.keys(v2)).toEqual([
      'deployment.yaml',
      'job.yaml',
      'service.yaml',
      'serviceaccount.yaml',
    ]);
    expect(commits.v1).toMatch(/^[0-9a-f]{40}$/);
    expect(commits.v2).toMatch(/^[0-9a-f]{40}$/);
    expect(commits.v2).not.toBe(commits.v1);
  });

  it.each([
    ['tag v1', 'v1', 'v1'],
    ['branch main', 'main', 'v1'],
    ['tag v2', 'v2', 'v2'],
    ['branch next', 'next', 'v2'],
  ] as const)(
    'reads deploy/ at %s (ref %s) as the files of %s, with its commit as the etag',
    async (_name, ref, version) => {
      await expect(
        filesOf(reader, `${base}/tree/${ref}/deploy`),
      ).resolves.toEqual({
        etag: commits[version],
        files: await exampleFiles(version),
      });
    },
  );

  it('reads a version by its commit SHA', async () => {
    await expect(
      filesOf(reader, `${base}/tree/${commits.v2}/deploy`),
    ).resolves.toEqual({
      etag: commits.v2,
      files: await exampleFiles('v2'),
    });
  });

  it('makes v2 one commit on v1, which deletes the ConfigMap', async () => {
    const { stdout } = await promisify(execFile)('git', [
      '--git-dir',
      path.join(root, 'inventory.git'),
      'rev-parse',
      'v2^{commit}^',
      'refs/heads/main',
      'refs/heads/next',
    ]);
    expect(stdout.trim().split('\n')).toEqual([
      commits.v1,
      commits.v1,
      commits.v2,
    ]);
    const response = await reader.readUrl(
      `${base}/blob/v1/deploy/configmap.yaml`,
    );
    expect(response.etag).toBe(commits.v1);
    await expect(
      reader.readUrl(`${base}/blob/v2/deploy/configmap.yaml`),
    ).rejects.toMatchObject({ name: 'NotFoundError' });
  });

  it('refuses to build over a repository that already exists', async () => {
    await expect(createInventoryRepository({ root })).rejects.toThrow(
      /inventory\.git already exists/,
    );
  });

  it('says which version folder is missing', async () => {
    const examplesDir = path.join(tmp, 'empty-examples');
    await fs.mkdir(path.join(examplesDir, 'inventory', 'v1'), {
      recursive: true,
    });
    await fs.writeFile(
      path.join(examplesDir, 'inventory', 'v1', 'a.yaml'),
      'a: 1\n',
    );
    await expect(
      createInventoryRepository({
        root: path.join(tmp, 'other'),
        examplesDir,
      }),
    ).rejects.toThrow(/inventory\/v2 does not exist/);
  });
});
