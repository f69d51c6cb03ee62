/*
 * Kubeconfigs held in Secrets of the hub cluster are written by whoever may write a Secret there.
 * A labelled Secret whose kubeconfig names a token file of the backend's host (`token-file`, in
 * the current context or another one) and a server that is a listener of ours must never make
 * Fleet read that file and send it: the listener receives nothing through discovery and health
 * cycles. A discovered Secret rewritten to name a token file leaves its cluster UNKNOWN with a
 * reason naming the field. A manual `secret:` reference to an unlabelled Secret (another team's
 * admin kubeconfig, as Cluster API writes them) or to one outside the discovery namespace is
 * never read: its API server receives no request.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startSimulator } from '@cnp/fleet-harness';
import {
  CHAOS_READY_DELAY_MS,
  short,
  startFleetBackend,
  tempDir,
} from '../lib';
import type { Scenario } from '../lib';

const SELECTOR = 'cnp.io/kubeconfig=true';
const LABELS = { 'cnp.io/kubeconfig': 'true' };
const NAMESPACE = 'fleet-system';

/** A plain HTTP listener that records the Authorization header of every request. */
async function startListener() {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers.authorization ?? '(none)');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"kind":"NamespaceList","items":[]}');
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise(resolve => server.close(resolve)),
  };
}

export const kubeconfigTokens: Scenario = {
  id: 'kubeconfig-tokens',
  title: 'Kubeconfig Secrets naming host files, and unlabelled Secrets',
  tried:
    "labelled hub Secrets whose kubeconfigs name the backend's token file (token-file, in the current and in another context) and a listener as server; a discovered Secret rewritten to name the token file; manual secret: references to an unlabelled Secret (Cluster API style, key value) and to a labelled one outside fleet.discovery.secretNamespace; three health cycles",
  timeoutMs: 120_000,
  async run({ checks, db, tmp, log }) {
    const sim = await startSimulator({
      readyDelayMs: CHAOS_READY_DELAY_MS,
      clusters: ['hub', 'kt-edge', 'kt-admin', 'kt-other'],
      outDir: tempDir('fleet-chaos-kt-sim-'),
    });
    const hub = new KubeConfig();
    hub.loadFromFile(sim.kubeconfigPath('hub'));
    const core = hub.makeApiClient(CoreV1Api);
    const putSecret = async (
      namespace: string,
      name: string,
      kubeconfig: string,
      labels: Record<string, string> | undefined,
      key = 'kubeconfig',
    ) => {
      await core
        .createNamespace({ body: { metadata: { name: namespace } } })
        .catch(() => undefined);
      await core
        .deleteNamespacedSecret({ namespace, name })
        .catch(() => undefined);
      await core.createNamespacedSecret({
        namespace,
        body: { metadata: { name, labels }, stringData: { [key]: kubeconfig } },
      });
    };

    // The backend's own token, as a pod's service account token or a dev token file is.
    const marker = `host-token-${randomBytes(12).toString('hex')}`;
    const tokenFile = path.join(tmp, 'backend-token');
    writeFileSync(tokenFile, marker, { mode: 0o600 });
    const listener = await startListener();
    try {
      const listenerKubeconfig = (tokenFileIn: 'current' | 'other') =>
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          // Plain HTTP: client-node sends to it only without TLS verification. One server URL
          // per Secret (one API server is one cluster).
          clusters: [
            {
              name: 'l',
              cluster: {
                server: `${listener.url}/${tokenFileIn}`,
                'insecure-skip-tls-verify': true,
              },
            },
          ],
          users: [
            {
              name: 'current',
              user:
                tokenFileIn === 'current'
                  ? { 'token-file': tokenFile }
                  : { token: 'inline' },
            },
            { name: 'other', user: { 'token-file': tokenFile } },
          ],
          contexts: [
            {
              name: `listener-${tokenFileIn}`,
              context: { cluster: 'l', user: 'current' },
            },
            {
              name: `listener-${tokenFileIn}-other`,
              context: { cluster: 'l', user: 'other' },
            },
          ],
          'current-context': `listener-${tokenFileIn}`,
        });
      await putSecret(
        NAMESPACE,
        'listener-current',
        listenerKubeconfig('current'),
        LABELS,
      );
      await putSecret(
        NAMESPACE,
        'listener-other',
        listenerKubeconfig('other'),
        LABELS,
      );
      const edge = readFileSync(sim.kubeconfigPath('kt-edge'), 'utf8');
      await putSecret(NAMESPACE, 'kt-edge', edge, LABELS);
      // Another team's admin kubeconfig, unlabelled, in Cluster API's key ...
      await putSecret(
        NAMESPACE,
        'kt-admin-kubeconfig',
        readFileSync(sim.kubeconfigPath('kt-admin'), 'utf8'),
        undefined,
        'value',
      );
      // ... and a labelled one outside the namespace Fleet reads kubeconfigs from.
      await putSecret(
        'team-b',
        'kt-other',
        readFileSync(sim.kubeconfigPath('kt-other'), 'utf8'),
        LABELS,
      );

      const fleet = await startFleetBackend({
        db,
        kubeconfigDir: tempDir('fleet-chaos-kt-dir-'),
        fleet: {
          health: { probeTimeout: { seconds: 1 } },
          hub: { kubeconfigPath: sim.kubeconfigPath('hub') },
          discovery: { secretSelector: SELECTOR, secretNamespace: NAMESPACE },
        },
        logFile: path.join(tmp, 'backend.log'),
      });
      const { call } = fleet;
      const cycle = async () => (await call('POST', '/health/run')).status;
      const cluster = async (name: string) =>
        (await call('GET', `/clusters/${name}`)).json;

      const registered = [
        await call('POST', '/clusters', {
          name: 'kt-admin',
          endpoint: sim.endpoint('kt-admin'),
          kubeconfigRef: `secret:${NAMESPACE}/kt-admin-kubeconfig#value`,
        }),
        await call('POST', '/clusters', {
          name: 'kt-other',
          endpoint: sim.endpoint('kt-other'),
          kubeconfigRef: 'secret:team-b/kt-other',
        }),
      ].map(a => a.status);
      const cycles = [await cycle(), await cycle()];
      const edgeBefore = await cluster('kt-edge');

      // The discovered Secret is rewritten: its user now names the token file.
      const edgeDoc = new KubeConfig();
      edgeDoc.loadFromString(edge);
      const rewritten = JSON.parse(edgeDoc.exportConfig());
      for (const user of rewritten.users)
        user.user = { 'token-file': tokenFile };
      await putSecret(NAMESPACE, 'kt-edge', JSON.stringify(rewritten), LABELS);
      cycles.push(await cycle());
      const edgeAfter = await cluster('kt-edge');
      const admin = await cluster('kt-admin');
      const other = await cluster('kt-other');
      const list = (await call('GET', '/clusters?limit=100')).json;
      const endpoints: string[] = (list?.items ?? []).map(
        (c: any) => c.endpoint,
      );
      log(
        `listener requests: ${listener.seen.length}; kt-edge ${
          edgeBefore?.status
        } → ${edgeAfter?.status} (${short(
          edgeAfter?.statusReason,
          100,
        )}); kt-admin ${admin?.status} (${short(
          admin?.statusReason,
          100,
        )}); kt-other ${other?.status}`,
      );

      checks.ok(
        registered.every(s => s === 201) && cycles.every(s => s === 200),
        'the manual registrations are stored and three health cycles run',
        { registered, cycles },
      );
      checks.ok(
        listener.seen.length === 0 &&
          !listener.seen.some(h => h.includes(marker)),
        "a listener named by Secret kubeconfigs whose users name the backend's token file (in the current or another context) receives no request, so never that token",
        listener.seen.map(h => (h.includes(marker) ? 'the host token' : h)),
      );
      checks.ok(
        !endpoints.some(e => e.startsWith(listener.url)),
        'no cluster is discovered from a Secret whose kubeconfig names a token file',
        endpoints,
      );
      checks.ok(
        edgeBefore?.status === 'ONLINE' &&
          edgeAfter?.status === 'UNKNOWN' &&
          /sets 'token-file'/.test(edgeAfter?.statusReason ?? ''),
        "a discovered Secret rewritten to name a token file leaves its cluster UNKNOWN with a reason naming 'token-file' (never OFFLINE)",
        `${edgeBefore?.status} → ${edgeAfter?.status}: ${edgeAfter?.statusReason}`,
      );
      checks.ok(
        admin?.status === 'UNKNOWN' &&
          /does not carry the labels/.test(admin?.statusReason ?? '') &&
          sim.requestCount('kt-admin') === 0,
        'a manual secret: reference to an unlabelled Secret is not used: UNKNOWN, and its API server receives no request',
        `${admin?.status} (${admin?.statusReason}); requests ${sim.requestCount(
          'kt-admin',
        )}`,
      );
      checks.ok(
        other?.status === 'UNKNOWN' &&
          /only in namespace 'fleet-system'/.test(other?.statusReason ?? '') &&
          sim.requestCount('kt-other') === 0,
        'a manual secret: reference to a labelled Secret outside fleet.discovery.secretNamespace is not used either',
        `${other?.status} (${other?.statusReason}); requests ${sim.requestCount(
          'kt-other',
        )}`,
      );
      const leaked = fleet.answers.filter(
        a => a.text.includes(marker) || a.text.includes(tokenFile),
      );
      checks.ok(
        leaked.length === 0,
        'no answer carries the host token or the token file path',
        leaked.map(a => `${a.method} ${a.path}`),
      );
    } finally {
      await listener.close();
    }
  },
};
