import { urlReaderServiceFactory } from '@backstage/backend-defaults/urlReader';
import {
  coreServices,
  createBackendPlugin,
  UrlReaderService,
} from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createExampleRepository } from './createExampleRepository';
import { gitHostUrlReaderFactory } from './gitHostUrlReaderFactory';
import { serveGitRepositories } from './serveGitRepositories';

jest.setTimeout(60_000);

/** A plugin that hands out the urlReader its backend gives it. */
function probePlugin(found: (reader: UrlReaderService) => void) {
  return createBackendPlugin({
    pluginId: 'probe',
    register(env) {
      env.registerInit({
        deps: { urlReader: coreServices.urlReader },
        async init({ urlReader }) {
          found(urlReader);
        },
      });
    },
  });
}

describe('gitHostUrlReaderFactory', () => {
  let tmp: string;

  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'git-host-feature-'));
  });

  afterEach(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('adds the reader to a backend, configured by fleet.gitHost', async () => {
    const root = path.join(tmp, 'repos');
    const sha = await createExampleRepository({
      root,
      name: 'inventory',
      files: { 'deploy/service.yaml': 'kind: Service\n' },
      message: 'Version 1',
    });
    const server = await serveGitRepositories({ root });
    let reader: UrlReaderService | undefined;
    const backend = await startTestBackend({
      features: [
        urlReaderServiceFactory,
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
        probePlugin(r => (reader = r)),
      ],
    });
    try {
      const response = await reader!.readUrl(
        `${server.url}/inventory.git/blob/main/deploy/service.yaml`,
      );
      expect(response.etag).toBe(sha);
      expect((await response.buffer()).toString()).toBe('kind: Service\n');
    } finally {
      await backend.stop();
      await server.close();
    }
  });

  it('adds no reader without the config key', async () => {
    let reader: UrlReaderService | undefined;
    const backend = await startTestBackend({
      features: [
        urlReaderServiceFactory,
        gitHostUrlReaderFactory,
        mockServices.rootConfig.factory({ data: {} }),
        probePlugin(r => (reader = r)),
      ],
    });
    try {
      await expect(
        reader!.readUrl('http://127.0.0.1:1/inventory.git/blob/main/a.yaml'),
      ).rejects.toMatchObject({ name: 'NotAllowedError' });
    } finally {
      await backend.stop();
    }
  });
});
