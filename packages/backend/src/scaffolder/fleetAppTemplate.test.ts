import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import scaffolderPlugin from '@backstage/plugin-scaffolder-backend';
import scaffolderModuleFleetActions from '@cnp/plugin-scaffolder-backend-module-fleet';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { parse, parseAllDocuments } from 'yaml';
import { scaffolderModulePublishLocal } from './publishLocal';

jest.setTimeout(120_000);

/*
 * The Fleet template (examples/templates/fleet-app/) run by the real scaffolder in dry-run mode,
 * as the template editor runs it: its parameters validated, its steps' conditions and inputs
 * rendered, and its skeletons rendered by fetch:template into the workspace this test reads.
 * publish:local does no dry run (it is skipped); the Fleet actions log their inputs and do
 * nothing.
 */

const templateDir = path.resolve(
  __dirname,
  '../../../../examples/templates/fleet-app',
);

type DryRunResult = {
  log: Array<{ body: { message: string; stepId?: string } }>;
  directoryContents: Array<{ path: string; base64Content: string }>;
  output: { text?: Array<{ title: string; content: string }> };
};

/** Every file of a folder, as the template editor uploads a template's folder. */
function directoryContents(dir: string, base = dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry): Array<{ path: string; base64Content: string }> => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return directoryContents(full, base);
      return [
        {
          path: path.relative(base, full),
          base64Content: fs.readFileSync(full).toString('base64'),
        },
      ];
    });
}

/** What the form sends when the user keeps every default but the name and the workload. */
function formValues(values: Record<string, unknown>) {
  return {
    description: 'A service deployed by Fleet',
    owner: 'group:default/guests',
    workload: 'generated',
    image: 'ghcr.io/acme/hello:1.0.0',
    cluster: 'sim-1',
    replicas: 2,
    port: 8000,
    ...values,
  };
}

describe('the Fleet template', () => {
  let server: Parameters<typeof request>[0];
  let publishDir: string;
  const template = parse(
    fs.readFileSync(path.join(templateDir, 'template.yaml'), 'utf8'),
  );
  const files = directoryContents(templateDir);

  beforeAll(async () => {
    publishDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-template-'));
    const backend = await startTestBackend({
      features: [
        scaffolderPlugin,
        scaffolderModuleFleetActions,
        scaffolderModulePublishLocal,
        catalogServiceMock.factory(),
        mockServices.rootConfig.factory({
          data: { localPublish: { directory: publishDir } },
        }),
      ],
    });
    server = backend.server;
  });

  afterAll(() => {
    fs.rmSync(publishDir, { recursive: true, force: true });
  });

  async function dryRun(values: Record<string, unknown>) {
    return request(server)
      .post('/api/scaffolder/v2/dry-run')
      .send({ template, values, secrets: {}, directoryContents: files });
  }

  async function run(values: Record<string, unknown>) {
    const res = await dryRun(values);
    expect(res.status).toBe(200);
    const result = res.body as DryRunResult;
    const workspace = new Map(
      result.directoryContents.map(f => [
        f.path,
        Buffer.from(f.base64Content, 'base64').toString('utf8'),
      ]),
    );
    const logOf = (stepId: string) =>
      result.log
        .filter(l => l.body.stepId === stepId)
        .map(l => l.body.message)
        .join('\n');
    const skipped = (stepId: string) =>
      logOf(stepId).includes(
        `Skipping step ${stepId} because its if condition was false`,
      );
    return { result, workspace, logOf, skipped };
  }

  /** Every YAML document of a rendered file, which must parse without error. */
  function documents(text: string) {
    const docs = parseAllDocuments(text);
    for (const doc of docs) expect(doc.errors).toEqual([]);
    return docs.map(doc => doc.toJS());
  }

  it('creates a component of Fleet’s generated workload by default, and deploys it', async () => {
    const { result, workspace, logOf, skipped } = await run(
      formValues({ name: 'orders' }),
    );

    expect([...workspace.keys()].sort()).toEqual([
      'README.md',
      'catalog-info.yaml',
    ]);
    const entity = parse(workspace.get('catalog-info.yaml')!);
    expect(entity).toEqual({
      apiVersion: 'backstage.io/v1alpha1',
      kind: 'Component',
      metadata: {
        name: 'orders',
        description: 'A service deployed by Fleet',
        annotations: {
          'cnp.io/image': 'ghcr.io/acme/hello:1.0.0',
          'cnp.io/clusters': 'sim-1',
          'backstage.io/kubernetes-id': 'orders',
        },
      },
      spec: {
        type: 'service',
        lifecycle: 'experimental',
        owner: 'group:default/guests',
      },
    });
    expect(workspace.get('README.md')).toContain(
      'Deployed by Fleet: image `ghcr.io/acme/hello:1.0.0` on cluster `sim-1`',
    );
    expect(workspace.get('README.md')).not.toMatch(/\$\{\{|\{%|deploy\//);
    expect(workspace.get('README.md')).toMatch(/catalog\.\n$/);

    expect(skipped('fetch-manifests')).toBe(true);
    expect(skipped('register')).toBe(false);
    expect(logOf('register')).toMatch(
      /fleet:application:register in dry-run mode with inputs/,
    );
    expect(logOf('register')).toContain('"image": "ghcr.io/acme/hello:1.0.0"');
    expect(skipped('register-manifests')).toBe(true);
    expect(logOf('deploy')).toMatch(/Dry run: would deploy .* to sim-1/);
    expect(result.output.text?.map(t => t.content)).toEqual([
      expect.stringContaining('**orders** on **sim-1** is **Pending**'),
    ]);
  });

  it('with manifests in the repository, adds deploy/ and cnp.io/manifests-ref, and gives Fleet no image', async () => {
    const { result, workspace, logOf, skipped } = await run(
      formValues({
        name: 'stock',
        workload: 'manifests',
        image: 'ghcr.io/acme/stock:3.1.0',
        replicas: 3,
        port: 9090,
        cluster: 'sim-2',
      }),
    );

    expect([...workspace.keys()].sort()).toEqual([
      'README.md',
      'catalog-info.yaml',
      'deploy/configmap.yaml',
      'deploy/deployment.yaml',
      'deploy/service.yaml',
      'deploy/serviceaccount.yaml',
    ]);
    const entity = parse(workspace.get('catalog-info.yaml')!);
    expect(entity.metadata.annotations).toEqual({
      'cnp.io/manifests-ref': 'dir:./deploy',
      'cnp.io/clusters': 'sim-2',
      'backstage.io/kubernetes-id': 'stock',
    });
    expect(workspace.get('README.md')).toContain('own Kubernetes manifests');
    expect(workspace.get('README.md')).toMatch(/catalog\.\n$/);
    expect(workspace.get('README.md')).not.toMatch(/\$\{\{|\{%|cnp\.io\/image/);

    const objects = [...workspace]
      .filter(([file]) => file.startsWith('deploy/'))
      .flatMap(([, text]) => documents(text));
    for (const object of objects) {
      expect(object).toEqual(
        expect.objectContaining({
          apiVersion: expect.any(String),
          kind: expect.any(String),
          metadata: expect.objectContaining({ name: expect.any(String) }),
        }),
      );
      // Fleet puts them in the application's namespace.
      expect(object.metadata.namespace).toBeUndefined();
      expect(JSON.stringify(object)).not.toMatch(/\$\{\{|\{%/);
    }
    const byKind = new Map(objects.map(o => [o.kind, o]));
    expect([...byKind.keys()].sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'Service',
      'ServiceAccount',
    ]);
    expect(objects).toHaveLength(4);

    const deployment = byKind.get('Deployment');
    const service = byKind.get('Service');
    const pod = deployment.spec.template;
    const [app] = pod.spec.containers;
    expect(deployment.metadata.name).toBe('stock');
    expect(service.metadata.name).toBe('stock');
    expect(deployment.spec.replicas).toBe(3);
    expect(deployment.spec.selector.matchLabels).toEqual(pod.metadata.labels);
    expect(app.image).toBe('ghcr.io/acme/stock:3.1.0');
    expect(app.ports).toEqual([
      { name: 'http', containerPort: 9090, protocol: 'TCP' },
    ]);
    for (const probe of [app.readinessProbe, app.livenessProbe]) {
      expect(probe.httpGet).toEqual({ path: '/health', port: 'http' });
    }
    // The objects name one another as Kubernetes will look them up.
    expect(pod.spec.serviceAccountName).toBe(
      byKind.get('ServiceAccount').metadata.name,
    );
    expect(app.envFrom).toEqual([
      { configMapRef: { name: byKind.get('ConfigMap').metadata.name } },
    ]);
    expect(byKind.get('ConfigMap').metadata.name).toBe('stock-config');
    expect(service.spec.selector).toEqual(pod.metadata.labels);
    expect(service.spec.ports).toEqual([
      { name: 'http', protocol: 'TCP', port: 80, targetPort: 'http' },
    ]);

    // Registered with no image, replicas or port (they are deploy/'s), and not deployed here.
    expect(skipped('fetch-manifests')).toBe(false);
    expect(skipped('register')).toBe(true);
    expect(logOf('register-manifests')).toMatch(
      /fleet:application:register in dry-run mode with inputs/,
    );
    expect(logOf('register-manifests')).toContain('"spec": {}');
    expect(logOf('register-manifests')).toContain('"sim-2"');
    expect(skipped('deploy')).toBe(true);
    expect(result.output.text?.map(t => t.content)).toEqual([
      expect.stringContaining('with its own manifests in `deploy/`'),
    ]);
  });

  it('refuses a name that cannot name a Service, and a workload it does not know', async () => {
    const digitFirst = await dryRun(formValues({ name: '7-eleven' }));
    expect(digitFirst.status).toBe(400);
    expect(JSON.stringify(digitFirst.body.errors)).toContain('pattern');
    const helm = await dryRun(formValues({ name: 'orders', workload: 'helm' }));
    expect(helm.status).toBe(400);
    expect(JSON.stringify(helm.body.errors)).toContain('enum');
  });
});
