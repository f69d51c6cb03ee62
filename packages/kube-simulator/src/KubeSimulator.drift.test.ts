import https from 'node:https';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { KubeSimulator } from './KubeSimulator';

describe('drift injection', () => {
  let sim: KubeSimulator;
  beforeAll(async () => {
    sim = await KubeSimulator.start({ clusters: ['d1'] });
  });
  afterAll(() => sim.stop());

  it('edits and deletes live objects behind the client, through the library and the control API', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(sim.kubeconfigPath('d1'));
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
          },
        },
      },
    });
    await core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } },
    });

    const edited = sim.drift('d1', {
      kind: 'Deployment',
      name: 'web',
      patch: {
        spec: {
          template: {
            spec: { containers: [{ name: 'web', image: 'evil:latest' }] },
          },
        },
      },
    });
    expect(edited?.metadata.generation).toBe(2);
    const live = await apps.readNamespacedDeployment({
      name: 'web',
      namespace: 'default',
    });
    expect(live.spec?.template.spec?.containers[0].image).toBe('evil:latest');

    const answer = await new Promise<{ status?: number; body: string }>(
      (resolve, reject) => {
        const req = https.request(
          `${sim.url}/clusters/d1/_sim/drift`,
          {
            method: 'POST',
            ca: sim.caPem,
            headers: { 'content-type': 'application/json' },
          },
          res => {
            let body = '';
            res.on('data', chunk => (body += chunk));
            res.on('end', () => resolve({ status: res.statusCode, body }));
          },
        );
        req.on('error', reject);
        req.end(
          JSON.stringify({
            kind: 'Service',
            namespace: 'default',
            name: 'web',
            delete: true,
          }),
        );
      },
    );
    expect(answer).toEqual({
      status: 200,
      body: JSON.stringify({ deleted: true }),
    });
    await expect(
      core.readNamespacedService({ name: 'web', namespace: 'default' }),
    ).rejects.toMatchObject({ code: 404 });
    expect(() =>
      sim.drift('d1', { kind: 'Nope', name: 'x', patch: {} }),
    ).toThrow(/unknown kind/);
  });
});
