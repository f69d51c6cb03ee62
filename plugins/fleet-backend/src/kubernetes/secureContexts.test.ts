import { useSimulator } from '@cnp/kube-simulator';
import { KubeconfigAccessPolicy } from '@cnp/plugin-fleet-node';
import { CoreV1Api } from '@kubernetes/client-node';
import tls from 'node:tls';
import { ClusterAccess, ClusterClients } from './ClusterClients';
import {
  clusterAgentFor,
  MAX_FREE_SOCKETS,
  poolStats,
  sharedSecureContext,
} from './secureContexts';

jest.setTimeout(30_000);

// Two clusters behind one simulator (one CA, a token each), one behind another (its own CA).
const sim = useSimulator({ clusters: ['alpha', 'bravo'] });
const other = useSimulator({ clusters: ['elsewhere'] });

const access = (s: typeof sim, name: string): ClusterAccess => ({
  name,
  endpoint: s.endpoint(name),
  kubeconfigRef: s.kubeconfigPath(name),
  source: 'discovered',
});

function clientsFor() {
  return ClusterClients.create({
    policy: KubeconfigAccessPolicy.create({
      kubeconfigDir: sim.kubeconfigDir,
      allowedKubeconfigDirs: [other.kubeconfigDir],
    }),
  });
}

afterEach(() => jest.restoreAllMocks());

describe('shared secure contexts', () => {
  it('clusters with the same CA and credentials share one TLS context; another CA gets its own', async () => {
    const created = jest.spyOn(tls, 'createSecureContext');
    const clients = clientsFor();
    try {
      expect((await clients.probe(access(sim, 'alpha'), 2_000)).kind).toBe(
        'success',
      );
      expect((await clients.probe(access(sim, 'bravo'), 2_000)).kind).toBe(
        'success',
      );
      expect(created).toHaveBeenCalledTimes(1);
      expect(poolStats()).toMatchObject({ secureContexts: 1, agents: 2 });

      expect(
        (await clients.probe(access(other, 'elsewhere'), 2_000)).kind,
      ).toBe('success');
      expect(created).toHaveBeenCalledTimes(2);
      expect(poolStats()).toMatchObject({ secureContexts: 2, agents: 3 });
    } finally {
      clients.dispose();
    }
  });

  it('keeps one idle connection per cluster after a burst of parallel requests', async () => {
    const clients = clientsFor();
    try {
      const loaded = await clients.kubeConfigFor(access(sim, 'alpha'));
      if (loaded.kind !== 'ok') throw new Error(loaded.reason);
      const core = loaded.kubeConfig.makeApiClient(CoreV1Api);
      const connections = sim.connectionCount();
      await Promise.all(
        Array.from({ length: 6 }, () =>
          core.listNamespace({ limit: 1 }, loaded.requestOptions(5_000)),
        ),
      );
      // The burst opened several connections (the pool is the cluster's own, fresh here)...
      expect(sim.connectionCount() - connections).toBeGreaterThan(1);
      await new Promise(r => setTimeout(r, 50));
      // ...and keeps one of them for the next request, not all of them.
      const stats = poolStats();
      expect(stats.activeSockets).toBe(0);
      expect(stats.freeSockets).toBeLessThanOrEqual(
        MAX_FREE_SOCKETS * stats.agents,
      );
      expect(stats.freeSockets).toBeLessThanOrEqual(1);
      // The kept connection serves the next request without a new handshake.
      const before = sim.connectionCount();
      await core.listNamespace({ limit: 1 }, loaded.requestOptions(5_000));
      expect(sim.connectionCount()).toBe(before);
    } finally {
      clients.dispose();
    }
  });

  it('tells TLS material apart by content, however it is split', () => {
    const ca = sim.caPem;
    const a = sharedSecureContext({ ca });
    expect(sharedSecureContext({ ca: Buffer.from(ca) })).toBe(a);
    expect(sharedSecureContext({ ca: [ca] })).toBe(a);
    expect(sharedSecureContext({ ca: other.caPem })).not.toBe(a);
    expect(sharedSecureContext({ ca: [ca, other.caPem] })).not.toBe(a);
    expect(sharedSecureContext({ ca: `${ca}\n` })).not.toBe(a);
  });

  it('still refuses material that does not parse', () => {
    expect(() =>
      clusterAgentFor({
        ca: sim.caPem,
        cert: 'not a certificate',
        key: 'nor a key',
      }),
    ).toThrow();
  });
});
