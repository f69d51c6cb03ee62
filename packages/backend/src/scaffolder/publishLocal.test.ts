import {
  coreServices,
  createBackendModule,
  type AuthService,
} from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import catalogPlugin from '@backstage/plugin-catalog-backend';
import {
  catalogServiceRef,
  type CatalogService,
} from '@backstage/plugin-catalog-node';
import { createMockActionContext } from '@backstage/plugin-scaffolder-node-test-utils';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import {
  createPublishLocalAction,
  localPublishLocationTarget,
} from './publishLocal';

jest.setTimeout(120_000);

/*
 * publish:local against a real catalog that reads the publish folder through a file location
 * with a glob, refreshed only every hour here: the component reaches the catalog because the
 * action asks for the location to be read now, not because the catalog got to it.
 */
describe('publish:local', () => {
  let dir: string;
  let catalog: CatalogService;
  let auth: AuthService;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-publish-'));
    fs.mkdirSync(path.join(dir, 'published'));
    const backend = await startTestBackend({
      features: [
        catalogPlugin,
        createBackendModule({
          pluginId: 'catalog',
          moduleId: 'test-capture',
          register(reg) {
            reg.registerInit({
              deps: { c: catalogServiceRef, a: coreServices.auth },
              async init({ c, a }) {
                catalog = c;
                auth = a;
              },
            });
          },
        }),
        mockServices.rootConfig.factory({
          data: {
            catalog: {
              rules: [{ allow: ['Component', 'Location'] }],
              locations: [
                {
                  type: 'file',
                  target: localPublishLocationTarget(
                    path.join(dir, 'published'),
                  ),
                },
              ],
              processingInterval: { hours: 1 },
            },
          },
        }),
      ],
    });
    stop = () => backend.stop();
  });

  afterAll(async () => {
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function workspace(name: string) {
    const ws = fs.mkdtempSync(path.join(dir, 'ws-'));
    fs.writeFileSync(
      path.join(ws, 'catalog-info.yaml'),
      stringify({
        apiVersion: 'backstage.io/v1alpha1',
        kind: 'Component',
        metadata: { name, annotations: { 'cnp.io/image': `${name}:1` } },
        spec: { type: 'service', lifecycle: 'experimental', owner: 'guests' },
      }),
    );
    fs.writeFileSync(path.join(ws, 'README.md'), `# ${name}\n`);
    return ws;
  }

  it('copies the workspace to <directory>/<name>/ and ends once the component is in the catalog', async () => {
    const action = createPublishLocalAction({
      directory: path.join(dir, 'published'),
      catalog,
      auth,
    });
    const credentials = await auth.getOwnServiceCredentials();
    expect(
      await catalog.getEntityByRef('component:default/orders', {
        credentials,
      }),
    ).toBeUndefined();

    const ctx = createMockActionContext({
      input: { name: 'orders' },
      workspacePath: workspace('orders'),
    });
    await action.handler(ctx as any);

    expect(ctx.output).toHaveBeenCalledWith(
      'entityRef',
      'component:default/orders',
    );
    expect(
      fs.readFileSync(
        path.join(dir, 'published', 'orders', 'README.md'),
        'utf8',
      ),
    ).toBe('# orders\n');
    const entity = await catalog.getEntityByRef('component:default/orders', {
      credentials,
    });
    expect(entity?.metadata.annotations?.['cnp.io/image']).toBe('orders:1');
  });

  it('refuses a name whose folder is already there, leaving it as it was', async () => {
    const action = createPublishLocalAction({
      directory: path.join(dir, 'published'),
      catalog,
      auth,
    });
    // A folder left there (by hand, or a publish the catalog refused).
    fs.mkdirSync(path.join(dir, 'published', 'stale'));
    fs.writeFileSync(
      path.join(dir, 'published', 'stale', 'README.md'),
      'kept\n',
    );
    const ctx = createMockActionContext({
      input: { name: 'stale' },
      workspacePath: workspace('stale'),
    });
    await expect(action.handler(ctx as any)).rejects.toThrow(
      /'stale' is already published/,
    );
    expect(
      fs.readFileSync(
        path.join(dir, 'published', 'stale', 'README.md'),
        'utf8',
      ),
    ).toBe('kept\n');
  });

  it('publishes only the component the name says, and never one the catalog already has', async () => {
    const action = createPublishLocalAction({
      directory: path.join(dir, 'published'),
      catalog,
      auth,
    });
    // The workspace describes another component than the name given.
    await expect(
      action.handler(
        createMockActionContext({
          input: { name: 'billing' },
          workspacePath: workspace('payments'),
        }) as any,
      ),
    ).rejects.toThrow(/must describe component:default\/billing/);
    // orders is in the catalog (published above), even if its folder were gone.
    fs.rmSync(path.join(dir, 'published', 'orders'), {
      recursive: true,
      force: true,
    });
    await expect(
      action.handler(
        createMockActionContext({
          input: { name: 'orders' },
          workspacePath: workspace('orders'),
        }) as any,
      ),
    ).rejects.toThrow(/component:default\/orders is already in the catalog/);
    expect(fs.existsSync(path.join(dir, 'published', 'billing'))).toBe(false);
  });

  it('fails the step, saying which location it needs, when the catalog does not read the folder', async () => {
    const action = createPublishLocalAction({
      directory: path.join(dir, 'elsewhere'),
      catalog,
      auth,
      timeoutMs: 3_000,
    });
    const ctx = createMockActionContext({
      input: { name: 'billing' },
      workspacePath: workspace('billing'),
    });
    await expect(action.handler(ctx as any)).rejects.toThrow(
      /a file location with the target .*elsewhere.*catalog-info\.yaml/,
    );
    // Nothing is left behind: the name can be tried again once the location is there.
    expect(fs.existsSync(path.join(dir, 'elsewhere', 'billing'))).toBe(false);
  });
});
