/*
 * Watches as HTTP/2 streams against the kube simulator: a connection the server is draining
 * (GOAWAY), a watch the server never answers, and pings only on a silent connection.
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { ServerHttp2Session } from 'node:http2';
import { useSimulator } from '@cnp/kube-simulator';
import { clusterAgentFor } from './secureContexts';
import { openWithin } from '../livestate/ClusterWatches';
import { Http2Watches } from './Http2Watches';

jest.setTimeout(30_000);

const sim = useSimulator({ clusters: ['h2'] });

async function until(
  what: string,
  probe: () => boolean,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 20));
  }
}

function client() {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(sim.kubeconfigPath('h2'));
  const agent = clusterAgentFor({ ca: sim.caPem });
  return { kubeConfig, agent };
}

describe('Http2Watches', () => {
  it('opens new watches on a new connection once the server sent GOAWAY on the old one', async () => {
    const { kubeConfig, agent } = client();
    const watches = new Http2Watches(5_000);
    const open = () =>
      watches.watch(
        kubeConfig,
        agent,
        '/api/v1/services',
        { timeoutSeconds: 60 },
        () => undefined,
        () => undefined,
      );
    try {
      const first = await open();
      await until('one watch', () => sim.openWatches('h2') === 1);
      // The server drains the connection (kube-apiserver's --goaway-chance, a graceful
      // shutdown): the open stream goes on, new ones must go over another connection.
      expect(watches.usable(agent)).toBe(true);
      for (const session of sim.http2Sessions()) session.goaway();
      await until('the client read the GOAWAY', () => !watches.usable(agent));
      const second = await open();
      await until('two watches', () => sim.openWatches('h2') === 2);
      expect(sim.openWatches('h2')).toBe(2);
      first.abort();
      second.abort();
    } finally {
      watches.close();
    }
  });

  it('lists over the connection with receive windows of 4 MiB a stream and 16 MiB in all, and refuses an answer that holds no list', async () => {
    const { kubeConfig, agent } = client();
    const watches = new Http2Watches(5_000);
    try {
      const listed = (await watches.list(
        kubeConfig,
        agent,
        '/api/v1/namespaces/default/services',
        {},
        5_000,
      )) as { items: unknown[] };
      expect(Array.isArray(listed.items)).toBe(true);
      const sessions = [...sim.http2Sessions()].filter(
        session => !session.closed && !session.destroyed,
      );
      expect(sessions.length).toBeGreaterThan(0);
      for (const session of sessions) {
        // What the client told the server it may send: Node's default is 65,535 bytes.
        expect(session.remoteSettings.initialWindowSize).toBe(4 << 20);
        expect(session.state.remoteWindowSize).toBeGreaterThan(8 << 20);
      }
      // A single object is JSON a 2xx holds, but no list.
      await expect(
        watches.list(
          kubeConfig,
          agent,
          '/api/v1/namespaces/default',
          {},
          5_000,
        ),
      ).rejects.toThrow('is not a list');
    } finally {
      watches.close();
    }
  });

  it('closes the stream of a watch the server never answers', async () => {
    const { kubeConfig, agent } = client();
    const watches = new Http2Watches(500);
    try {
      // the connection is made first: the fault holds requests, not handshakes
      const warm = await watches.watch(
        kubeConfig,
        agent,
        '/api/v1/services',
        { timeoutSeconds: 60 },
        () => undefined,
        () => undefined,
      );
      warm.abort();
      sim.setFault('h2', { mode: 'timeout' });
      await expect(
        openWithin(
          watches.watch(
            kubeConfig,
            agent,
            '/api/v1/services',
            { timeoutSeconds: 60 },
            () => undefined,
            () => undefined,
          ),
          500,
          'the watch',
        ),
      ).rejects.toThrow(/no answer/);
      await until(
        'held request closed',
        () => sim.heldRequestCount('h2') === 0,
      );
    } finally {
      watches.close();
    }
  });

  it('pings a connection only once nothing was read from it for the idle time', async () => {
    const { kubeConfig, agent } = client();
    // Long enough that a loaded machine's slow answers neither look idle nor miss the ping's
    // deadline.
    const idleMs = 2_000;
    const timeoutMs = 3_000;
    const watches = new Http2Watches(5_000, { idleMs, timeoutMs });
    let pings = 0;
    const counted = new WeakSet<ServerHttp2Session>();
    const onPing = () => {
      pings += 1;
    };
    const countPings = () => {
      for (const session of sim.http2Sessions()) {
        if (counted.has(session)) continue;
        counted.add(session);
        session.on('ping', onPing);
      }
    };
    try {
      const watch = await watches.watch(
        kubeConfig,
        agent,
        '/api/v1/services',
        { timeoutSeconds: 60 },
        () => undefined,
        () => undefined,
      );
      countPings();
      // Answers keep arriving every 100 ms: the connection is alive without a ping.
      const busyUntil = Date.now() + 2 * idleMs;
      while (Date.now() < busyUntil) {
        await watches.get(kubeConfig, agent, '/api/v1/namespaces', 2_000);
        await new Promise(r => setTimeout(r, 100));
      }
      expect(pings).toBe(0);
      // Silent (the watch has nothing to say): pinged within the idle time and a check.
      await until(
        'a ping on the silent connection',
        () => pings > 0,
        3 * idleMs,
      );
      // Past the ping's deadline the connection is still open: the ping was answered.
      await new Promise(r => setTimeout(r, timeoutMs + 500));
      expect(watches.usable(agent)).toBe(true);
      watch.abort();
    } finally {
      watches.close();
    }
  });
});
