import { urlReaderServiceFactory } from '@backstage/backend-defaults/urlReader';
import { UrlReaderService } from '@backstage/backend-plugin-api';
import {
  mockServices,
  ServiceFactoryTester,
} from '@backstage/backend-test-utils';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createExampleRepository } from './createExampleRepository';
import { gitHostUrlReaderFactory } from './gitHostUrlReaderFactory';
import {
  GitRepositoryServer,
  serveGitRepositories,
} from './serveGitRepositories';

jest.setTimeout(60_000);

const VERSION_1 = {
  'deploy/configmap.yaml': 'kind: ConfigMap\ndata: { level: info }\n',
  'deploy/deployment.yaml': 'kind: Deployment\nreplicas: 1\n',
  'README.md': '# inventory\n',
};
const VERSION_2 = {
  'deploy/deployment.yaml': 'kind: Deployment\nreplicas: 3\n',
  'deploy/jobs/migrate.yaml': 'kind: Job\n',
};

async function filesOf(reader: UrlReaderService, url: string) {
  const response = await reader.readTree(url);
  const files = await response.files();
  const entries = await Promise.all(
    files.map(async file => [file.path, (await file.content()).toString()]),
  );
  return { etag: response.etag, files: Object.fromEntries(entries.sort()) };
}

describe('GitHostUrlReader through the backend UrlReaderService', () => {
  let tmp: string;
  let root: string;
  let server: GitRepositoryServer;
  let reader: UrlReaderService;
  let v1: string;
  let v2: string;
  let base: string;

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'git-host-reader-'));
    root = path.join(tmp, 'repos');
    v1 = await createExampleRepository({
      root,
      name: 'inventory',
      files: VERSION_1,
      message: 'Version 1',
      tag: 'v1',
    });
    v2 = await createExampleRepository({
      root,
      name: 'inventory',
      files: VERSION_2,
      message: 'Version 2',
    });
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

  it('reads the folder at the branch head, with the commit as the etag', async () => {
    await expect(filesOf(reader, `${base}/tree/main/deploy`)).resolves.toEqual({
      etag: v2,
      files: {
        'configmap.yaml': VERSION_1['deploy/configmap.yaml'],
        'deployment.yaml': VERSION_2['deploy/deployment.yaml'],
        'jobs/migrate.yaml': VERSION_2['deploy/jobs/migrate.yaml'],
      },
    });
  });

  it.each([
    ['the tag', () => 'v1'],
    ['the commit SHA', () => v1],
    ['an abbreviated SHA', () => v1.slice(0, 10)],
  ])('reads the folder at %s as version 1', async (_, ref) => {
    await expect(
      filesOf(reader, `${base}/tree/${ref()}/deploy`),
    ).resolves.toEqual({
      etag: v1,
      files: {
        'configmap.yaml': VERSION_1['deploy/configmap.yaml'],
        'deployment.yaml': VERSION_1['deploy/deployment.yaml'],
      },
    });
  });

  it('reads a folder URL written as blob, as a location relative to a file resolves', async () => {
    const { files } = await filesOf(reader, `${base}/blob/v1/deploy`);
    expect(Object.keys(files)).toEqual(['configmap.yaml', 'deployment.yaml']);
  });

  it('reads the repository URL alone as the default branch root', async () => {
    const { etag, files } = await filesOf(reader, base);
    expect(etag).toBe(v2);
    expect(files['README.md']).toBe(VERSION_1['README.md']);
  });

  it('answers concurrent reads of one repository, each at its own ref', async () => {
    const etags = await Promise.all(
      ['main', 'v1', v1, 'main', 'v1'].map(ref =>
        reader.readTree(`${base}/tree/${ref}/deploy`).then(r => r.etag),
      ),
    );
    expect(etags).toEqual([v2, v1, v1, v2, v1]);
  });

  it('applies the filter and extracts the folder with dir()', async () => {
    const response = await reader.readTree(`${base}/tree/main/deploy`, {
      filter: file => !file.startsWith('jobs/'),
    });
    const dir = await response.dir();
    try {
      expect((await fs.readdir(dir)).sort()).toEqual([
        'configmap.yaml',
        'deployment.yaml',
      ]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('reads one file at a ref, with the commit as the etag', async () => {
    const response = await reader.readUrl(
      `${base}/blob/v1/deploy/deployment.yaml`,
    );
    expect(response.etag).toBe(v1);
    expect((await response.buffer()).toString()).toBe(
      VERSION_1['deploy/deployment.yaml'],
    );
    const latest = await reader.readUrl(
      `${base}/blob/main/deploy/deployment.yaml`,
    );
    expect(latest.etag).toBe(v2);
    expect((await latest.buffer()).toString()).toBe(
      VERSION_2['deploy/deployment.yaml'],
    );
  });

  it('answers NotModified for the etag of the current commit only', async () => {
    await expect(
      reader.readTree(`${base}/tree/main/deploy`, { etag: v2 }),
    ).rejects.toMatchObject({ name: 'NotModifiedError' });
    await expect(
      reader.readUrl(`${base}/blob/main/README.md`, { etag: v2 }),
    ).rejects.toMatchObject({ name: 'NotModifiedError' });
    const changed = await reader.readUrl(`${base}/blob/main/README.md`, {
      etag: v1,
    });
    expect(changed.etag).toBe(v2);
  });

  it('sees a new commit and a new branch with a slash on the next read', async () => {
    const v3 = await createExampleRepository({
      root,
      name: 'inventory',
      files: { 'deploy/configmap.yaml': null },
      message: 'Version 3 drops the ConfigMap',
    });
    const release = await createExampleRepository({
      root,
      name: 'inventory',
      files: { 'deploy/release.yaml': 'kind: Service\n' },
      message: 'Release branch',
      branch: 'release/1.0',
    });
    const main = await filesOf(reader, `${base}/tree/main/deploy`);
    expect(main.etag).toBe(v3);
    expect(Object.keys(main.files)).toEqual([
      'deployment.yaml',
      'jobs/migrate.yaml',
    ]);
    const branch = await filesOf(reader, `${base}/tree/release/1.0/deploy`);
    expect(branch).toEqual({
      etag: release,
      files: { ...main.files, 'release.yaml': 'kind: Service\n' },
    });
  });

  it.each([
    [
      () => `${base}/tree/no-such-branch/deploy`,
      /No branch, tag or commit .* matches 'no-such-branch\/deploy'/,
    ],
    [() => `${base}/tree/${'0'.repeat(40)}/deploy`, /No branch, tag or commit/],
    [() => `${base}/tree/main/nowhere`, /has no folder 'nowhere' at commit/],
    [() => `${base}/tree/main/README.md`, /has no folder 'README.md'/],
    [
      () => `${server.url}/missing.git/tree/main`,
      /Git repository .*missing\.git was not found/,
    ],
  ])(
    'answers NotFound for a folder that is not there (%#)',
    async (url, message) => {
      await expect(reader.readTree(url())).rejects.toMatchObject({
        name: 'NotFoundError',
        message: expect.stringMatching(message),
      });
    },
  );

  it('answers NotFound for a file that is not there, or is a folder', async () => {
    await expect(
      reader.readUrl(`${base}/blob/v1/deploy/jobs/migrate.yaml`),
    ).rejects.toMatchObject({
      name: 'NotFoundError',
      message: expect.stringContaining(
        `has no file 'deploy/jobs/migrate.yaml' at commit ${v1}`,
      ),
    });
    await expect(
      reader.readUrl(`${base}/blob/main/deploy`),
    ).rejects.toMatchObject({
      name: 'NotFoundError',
    });
  });

  it('answers InputError for a malformed percent-escape, in both reads', async () => {
    const url = `${base}/blob/main/%E0%A4%A`;
    await expect(reader.readUrl(url)).rejects.toMatchObject({
      name: 'InputError',
      message: expect.stringContaining(url),
    });
    await expect(reader.readTree(url)).rejects.toMatchObject({
      name: 'InputError',
    });
  });

  it('leaves URLs outside its base to the other readers', async () => {
    await expect(
      reader.readUrl('http://elsewhere.example/inventory.git/blob/main/a'),
    ).rejects.toMatchObject({
      name: 'NotAllowedError',
    });
  });
});
