import { useSimulator } from '@cnp/kube-simulator';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { ClusterAccess, ClusterClients } from './ClusterClients';
import { KubeconfigAccessPolicy } from '@cnp/plugin-fleet-node';
import { fingerprintCa } from './caFingerprint';

jest.setTimeout(30_000);

const sim = useSimulator({ clusters: ['alpha', 'bravo'] });
const other = useSimulator({ clusters: ['elsewhere'] });
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-clients-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function clientsFor(...dirs: string[]) {
  return ClusterClients.create({
    policy: KubeconfigAccessPolicy.create({
      kubeconfigDir: sim.kubeconfigDir,
      allowedKubeconfigDirs: dirs,
    }),
  });
}

const access = (
  name: string,
  kubeconfigRef = sim.kubeconfigPath(name),
  serverVersion?: string,
): ClusterAccess => ({
  name,
  endpoint: sim.endpoint(name),
  kubeconfigRef,
  source: 'discovered',
  serverVersion,
});
/** As the health worker passes it: with the version the first probe stored. */
const known = (name: string, kubeconfigRef?: string) =>
  access(name, kubeconfigRef, 'v1.31.0');

describe('ClusterClients', () => {
  it('probes a cluster over one pooled TLS connection, asking /version only the first time', async () => {
    const clients = clientsFor();
    try {
      const connections = sim.connectionCount();
      const requests = sim.requestCount('alpha');

      const first = await clients.probe(access('alpha'), 2_000);
      expect(first).toMatchObject({
        kind: 'success',
        serverVersion: expect.stringMatching(/^v1\./),
      });
      expect(sim.requestCount('alpha') - requests).toBe(2); // namespaces and /version

      const second = await clients.probe(known('alpha'), 2_000);
      const third = await clients.probe(known('alpha'), 2_000);
      expect(second).toMatchObject({
        kind: 'success',
        serverVersion: undefined,
      });
      expect(third.kind).toBe('success');
      expect(sim.requestCount('alpha') - requests).toBe(4); // one request per later probe
      // The first probe's two parallel requests may open two connections; later ones reuse them.
      const afterFirst = sim.connectionCount() - connections;
      expect(afterFirst).toBeGreaterThanOrEqual(1);
      expect(afterFirst).toBeLessThanOrEqual(2);

      await clients.probe(known('alpha'), 2_000);
      expect(sim.connectionCount() - connections).toBe(afterFirst);
      // A cluster with no stored version yet (e.g. registered again) still gets asked.
      await clients.probe(access('alpha'), 2_000);
      expect(sim.requestCount('alpha') - requests).toBe(7);
    } finally {
      clients.dispose();
    }
  });

  it("owns each cluster's HTTP/2 connection until closeHttp2, and probes go over it while it is open", async () => {
    const clients = clientsFor();
    try {
      const h2 = clients.http2For('alpha');
      expect(clients.http2For('alpha')).toBe(h2);
      expect(clients.http2For('bravo')).not.toBe(h2);
      const loaded = await clients.kubeConfigFor(access('alpha'));
      if (loaded.kind !== 'ok' || !loaded.agent) throw new Error('no client');
      // A list (as the watches make) opens it.
      await h2.list(
        loaded.kubeConfig,
        loaded.agent,
        '/api/v1/namespaces',
        {},
        5_000,
      );
      expect(h2.usable(loaded.agent)).toBe(true);
      const connections = sim.connectionCount();
      const requests = sim.requestCount('alpha');
      expect((await clients.probe(known('alpha'), 2_000)).kind).toBe('success');
      // On that connection (namespaces and a first /version), no connection of its own.
      expect(sim.requestCount('alpha') - requests).toBe(2);
      expect(sim.connectionCount()).toBe(connections);
      clients.closeHttp2('alpha');
      expect(h2.usable(loaded.agent)).toBe(false);
      expect(clients.http2For('alpha')).not.toBe(h2);
    } finally {
      clients.closeHttp2('alpha');
      clients.closeHttp2('bravo');
      clients.dispose();
    }
  });

  it('opens a new connection after closeIdleConnections, and keeps clusters on their own pools', async () => {
    const clients = clientsFor();
    try {
      await clients.probe(known('alpha'), 2_000);
      const connections = sim.connectionCount();
      await clients.probe(known('bravo'), 2_000);
      expect(sim.connectionCount()).toBeGreaterThan(connections); // bravo never shares alpha's sockets

      const before = sim.connectionCount();
      clients.closeIdleConnections();
      expect((await clients.probe(known('alpha'), 2_000)).kind).toBe('success');
      expect(sim.connectionCount()).toBe(before + 1);
    } finally {
      clients.dispose();
    }
  });

  it('asks /version again once a failed cluster answers (it may come back upgraded)', async () => {
    const clients = clientsFor();
    try {
      await clients.probe(known('bravo'), 2_000);
      sim.setFault('bravo', { mode: 'down' });
      expect((await clients.probe(known('bravo'), 2_000)).kind).toBe('failure');
      sim.setFault('bravo', { mode: 'ok' });
      expect(await clients.probe(known('bravo'), 2_000)).toMatchObject({
        kind: 'success',
        serverVersion: expect.stringMatching(/^v1\./),
      });
    } finally {
      clients.dispose();
    }
  });

  it('a timed-out probe aborts and the next probe still works on a fresh connection', async () => {
    const clients = clientsFor();
    try {
      await clients.probe(access('alpha'), 2_000);
      sim.setFault('alpha', { mode: 'timeout' });
      expect(await clients.probe(access('alpha'), 300)).toMatchObject({
        kind: 'failure',
        message: 'timed out after 300 ms',
      });
      // The aborted request closed its connection: the simulator holds nothing open for it, and
      // the next probe opens a new connection instead of reusing the dead one.
      for (let i = 0; i < 500 && sim.heldRequestCount('alpha') > 0; i++) {
        await new Promise(resolve => setTimeout(resolve, 10));
      }
      expect(sim.heldRequestCount('alpha')).toBe(0);
      const connectionsBefore = sim.connectionCount();
      sim.setFault('alpha', { mode: 'ok' });
      expect((await clients.probe(access('alpha'), 2_000)).kind).toBe(
        'success',
      );
      expect(sim.connectionCount()).toBeGreaterThan(connectionsBefore);
    } finally {
      clients.dispose();
    }
  });

  it('the pooled agent still verifies the server against the kubeconfig CA', async () => {
    // alpha's server and token, with another simulator's CA: the TLS handshake must fail.
    const doc = parse(fs.readFileSync(sim.kubeconfigPath('alpha'), 'utf8'));
    const foreignCa = parse(
      fs.readFileSync(other.kubeconfigPath('elsewhere'), 'utf8'),
    ).clusters[0].cluster['certificate-authority-data'];
    doc.clusters[0].cluster['certificate-authority-data'] = foreignCa;
    const file = path.join(dir, 'wrong-ca.yaml');
    fs.writeFileSync(file, stringify(doc), { mode: 0o600 });

    const clients = clientsFor(dir);
    try {
      const outcome = await clients.probe(access('alpha', file), 2_000);
      expect(outcome.kind).toBe('failure');
      expect((outcome as { message: string }).message).toMatch(
        /certificate|self.signed|verify/i,
      );
    } finally {
      clients.dispose();
    }
  });

  it("never sends a discovered cluster's requests to another API server its kubeconfig names now (another server, or the same URL with another CA)", async () => {
    const caOf = (file: string) =>
      fingerprintCa(
        Buffer.from(
          parse(fs.readFileSync(file, 'utf8')).clusters[0].cluster[
            'certificate-authority-data'
          ],
          'base64',
        ),
      );
    const file = path.join(dir, 'admin.conf');
    fs.copyFileSync(sim.kubeconfigPath('alpha'), file);
    const registered: ClusterAccess = {
      ...known('alpha', file),
      identityCa: caOf(sim.kubeconfigPath('alpha')),
    };
    const clients = clientsFor(dir);
    try {
      expect((await clients.probe(registered, 2_000)).kind).toBe('success');
      const touch = () => {
        const future = new Date(Date.now() + 5_000);
        fs.utimesSync(file, future, future);
      };

      // The file now holds another API server's kubeconfig.
      fs.copyFileSync(other.kubeconfigPath('elsewhere'), file);
      touch();
      const elsewhere = other.requestCount('elsewhere');
      expect(await clients.probe(registered, 2_000)).toMatchObject({
        kind: 'not-probeable',
        message: expect.stringContaining('is not the server of'),
      });
      expect(other.requestCount('elsewhere')).toBe(elsewhere);

      // alpha's URL, another CA: another API server answers there now.
      const doc = parse(fs.readFileSync(sim.kubeconfigPath('alpha'), 'utf8'));
      doc.clusters[0].cluster['certificate-authority-data'] = parse(
        fs.readFileSync(other.kubeconfigPath('elsewhere'), 'utf8'),
      ).clusters[0].cluster['certificate-authority-data'];
      fs.writeFileSync(file, stringify(doc), { mode: 0o600 });
      touch();
      const requests = sim.requestCount('alpha');
      expect(await clients.probe(registered, 2_000)).toMatchObject({
        kind: 'not-probeable',
        message: expect.stringContaining('trusts another CA'),
      });
      expect(sim.requestCount('alpha')).toBe(requests);
    } finally {
      clients.dispose();
    }
  });

  it("gives the CA fingerprint of a manual registration's kubeconfig for its endpoint, and none when it cannot be read or names another server", async () => {
    const clients = clientsFor();
    try {
      const ca = await clients.caFingerprintFor({
        endpoint: sim.endpoint('alpha'),
        kubeconfigRef: sim.kubeconfigPath('alpha'),
      });
      expect(ca).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(
        await clients.caFingerprintFor({
          endpoint: sim.endpoint('bravo'),
          kubeconfigRef: sim.kubeconfigPath('alpha'),
        }),
      ).toBeUndefined();
      expect(
        await clients.caFingerprintFor({
          endpoint: sim.endpoint('alpha'),
          kubeconfigRef: 'vault:alpha',
        }),
      ).toBeUndefined();
      expect(
        await clients.caFingerprintFor({
          endpoint: sim.endpoint('alpha'),
          kubeconfigRef: '/etc/passwd',
        }),
      ).toBeUndefined();
    } finally {
      clients.dispose();
    }
  });

  it('rebuilds the client and its pool when the kubeconfig file changes', async () => {
    const file = path.join(dir, 'alpha.yaml');
    fs.copyFileSync(sim.kubeconfigPath('alpha'), file);
    const clients = clientsFor(dir);
    try {
      expect((await clients.probe(access('alpha', file), 2_000)).kind).toBe(
        'success',
      );
      // The same file, now with bravo's token: alpha must answer 401, so the new token is used.
      const doc = parse(fs.readFileSync(file, 'utf8'));
      doc.users[0].user.token = sim.token('bravo');
      fs.writeFileSync(file, stringify(doc));
      const future = new Date(Date.now() + 5_000);
      fs.utimesSync(file, future, future);
      expect(await clients.probe(access('alpha', file), 2_000)).toMatchObject({
        kind: 'failure',
        message: expect.stringContaining('HTTP 401'),
      });
    } finally {
      clients.dispose();
    }
  });

  it('picks up a rotated CA file named by path in an unchanged kubeconfig', async () => {
    const doc = parse(fs.readFileSync(sim.kubeconfigPath('alpha'), 'utf8'));
    const caFile = path.join(dir, 'ca.pem');
    fs.writeFileSync(
      caFile,
      Buffer.from(
        doc.clusters[0].cluster['certificate-authority-data'],
        'base64',
      ),
    );
    delete doc.clusters[0].cluster['certificate-authority-data'];
    doc.clusters[0].cluster['certificate-authority'] = caFile;
    const file = path.join(dir, 'by-path.yaml');
    fs.writeFileSync(file, stringify(doc), { mode: 0o600 });

    const clients = clientsFor(dir);
    try {
      expect((await clients.probe(known('alpha', file), 2_000)).kind).toBe(
        'success',
      );
      // The CA file is replaced by another simulator's CA: the kubeconfig itself is untouched.
      const foreign = parse(
        fs.readFileSync(other.kubeconfigPath('elsewhere'), 'utf8'),
      ).clusters[0].cluster;
      fs.writeFileSync(
        caFile,
        Buffer.from(foreign['certificate-authority-data'], 'base64'),
      );
      const future = new Date(Date.now() + 5_000);
      fs.utimesSync(caFile, future, future);
      clients.closeIdleConnections(); // a pooled connection was verified with the old CA already
      const outcome = await clients.probe(known('alpha', file), 2_000);
      expect(outcome.kind).toBe('failure');
      expect((outcome as { message: string }).message).toMatch(
        /certificate|self.signed|verify/i,
      );
    } finally {
      clients.dispose();
    }
  });

  it('callers that find the same kubeconfig change at once share one client and pool', async () => {
    const file = path.join(dir, 'alpha.yaml');
    fs.copyFileSync(sim.kubeconfigPath('alpha'), file);
    const clients = clientsFor(dir);
    try {
      const load = () => clients.kubeConfigFor(access('alpha', file));
      const cold = await Promise.all([load(), load(), load()]);
      expect(cold.every(r => r.kind === 'ok')).toBe(true);
      const configs = new Set(
        cold.map(r => (r.kind === 'ok' ? r.kubeConfig : undefined)),
      );
      expect(configs.size).toBe(1);

      const future = new Date(Date.now() + 5_000);
      fs.utimesSync(file, future, future);
      const rebuilt = await Promise.all([load(), load()]);
      const after = new Set(
        rebuilt.map(r => (r.kind === 'ok' ? r.kubeConfig : undefined)),
      );
      expect(after.size).toBe(1);
      expect(configs.has([...after][0])).toBe(false); // it was rebuilt, once
    } finally {
      clients.dispose();
    }
  });

  it('runs an exec credential plugin only for discovered kubeconfigs, or for manual ones when allowed', async () => {
    // The simulator's kubeconfig, its user swapped for an exec plugin (it would run `true`).
    const doc = parse(fs.readFileSync(sim.kubeconfigPath('alpha'), 'utf8'));
    doc.users[0].user = {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: 'true',
        interactiveMode: 'Never',
      },
    };
    const file = path.join(dir, 'exec.yaml');
    fs.writeFileSync(file, stringify(doc));
    const manual: ClusterAccess = {
      ...access('alpha', file),
      source: 'manual',
    };

    const strict = clientsFor(dir);
    const refused = await strict.kubeConfigFor(manual);
    expect(refused).toEqual({
      kind: 'unusable',
      reason: expect.stringContaining(
        'runs an exec credential plugin, which Fleet runs only for discovered kubeconfigs',
      ),
    });
    expect(
      (await strict.kubeConfigFor({ ...manual, source: 'discovered' })).kind,
    ).toBe('ok');
    strict.dispose();

    // client-node's gcp and azure auth providers run their cmd-path through a shell too.
    doc.users[0].user = {
      'auth-provider': {
        name: 'gcp',
        config: { 'cmd-path': '/bin/sh', 'cmd-args': '-c true' },
      },
    };
    const providerFile = path.join(dir, 'provider.yaml');
    fs.writeFileSync(providerFile, stringify(doc));
    const strict2 = clientsFor(dir);
    expect(
      await strict2.kubeConfigFor({ ...manual, kubeconfigRef: providerFile }),
    ).toEqual({
      kind: 'unusable',
      reason: expect.stringContaining(
        'runs an auth-provider, which Fleet runs only for discovered kubeconfigs',
      ),
    });
    strict2.dispose();

    const open = ClusterClients.create({
      policy: KubeconfigAccessPolicy.create({
        kubeconfigDir: sim.kubeconfigDir,
        allowedKubeconfigDirs: [dir],
      }),
      allowExecForManual: true,
    });
    expect((await open.kubeConfigFor(manual)).kind).toBe('ok');
    open.dispose();
  });

  it('forgets the clients of clusters that are gone, keeping the others', async () => {
    const clients = clientsFor();
    try {
      const config = async (name: string) => {
        const loaded = await clients.kubeConfigFor(access(name));
        return loaded.kind === 'ok' ? loaded.kubeConfig : undefined;
      };
      const alpha = await config('alpha');
      const bravo = await config('bravo');
      clients.retainOnly(['alpha']);
      expect(await config('alpha')).toBe(alpha);
      const rebuilt = await config('bravo');
      expect(rebuilt).toBeDefined();
      expect(rebuilt).not.toBe(bravo);
    } finally {
      clients.dispose();
    }
  });
});
