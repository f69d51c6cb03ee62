/*
 * The supplier's rules for opening a Fleet cluster's kubeconfig, and the credentials the auth
 * strategy takes from it, on real kubeconfig files. Fleet's API is replaced by a list of cluster
 * records here (the module test runs the real Fleet backend).
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { Cluster } from '@cnp/plugin-fleet-common';
import {
  KubeconfigAccessPolicy,
  type FleetService,
} from '@cnp/plugin-fleet-node';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { FleetAuthStrategy } from './FleetAuthStrategy';
import { FleetClusterSupplier } from './FleetClusterSupplier';

const CA = Buffer.from(
  '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
).toString('base64');

let allowed: string;
let outside: string;
beforeEach(() => {
  allowed = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-k8s-allowed-'));
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-k8s-outside-'));
});
afterEach(() => {
  fs.rmSync(allowed, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

function kubeconfig(
  dir: string,
  name: string,
  server: string,
  user: Record<string, unknown>,
): string {
  const file = path.join(dir, `${name}.yaml`);
  fs.writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name, cluster: { server, 'certificate-authority-data': CA } },
      ],
      users: [{ name, user }],
      contexts: [{ name, context: { cluster: name, user: name } }],
      'current-context': name,
    }),
  );
  return file;
}

function cluster(
  name: string,
  endpoint: string,
  kubeconfigRef: string | null,
  extra: Partial<Cluster> = {},
): Cluster {
  return {
    name,
    endpoint,
    kubeconfigRef,
    context: null,
    source: 'discovered',
    labels: {},
    status: 'ONLINE',
    statusReason: null,
    consecutiveFailures: 0,
    consecutiveSuccesses: 1,
    failureThreshold: null,
    lastProbeAt: null,
    lastSuccessAt: null,
    lastTransitionAt: null,
    probeLatencyMs: null,
    serverVersion: null,
    createdAt: '2026-12-01T00:00:00Z',
    updatedAt: '2026-12-01T00:00:00Z',
    ...extra,
  };
}

function supplier(
  list: () => Promise<Cluster[]>,
  options: { allowExecForManual?: boolean; now?: () => number } = {},
) {
  const fleet = { listClusters: list } as unknown as FleetService;
  const clusters = FleetClusterSupplier.create({
    fleet,
    logger: mockServices.logger.mock(),
    policy: KubeconfigAccessPolicy.create({ kubeconfigDir: allowed }),
    refreshIntervalMs: 30_000,
    ...options,
  });
  return { clusters, auth: new FleetAuthStrategy(clusters) };
}

describe('FleetClusterSupplier', () => {
  it("gives each usable cluster with its kubeconfig's server and CA, and the fleet auth provider", async () => {
    const ref = kubeconfig(allowed, 'a', 'https://10.0.0.1:6443', {
      token: 't-a',
    });
    const { clusters } = supplier(async () => [
      cluster('a', 'https://10.0.0.1:6443/', ref),
    ]);
    expect(await clusters.getClusters()).toEqual([
      {
        name: 'a',
        title: 'a',
        url: 'https://10.0.0.1:6443',
        authMetadata: { 'kubernetes.io/auth-provider': 'fleet' },
        caData: CA,
        skipMetricsLookup: false,
      },
    ]);
  });

  it("leaves out what Fleet's own clients would not use: OFFLINE, hidden, outside the allowed directories, another server, a manual exec plugin", async () => {
    const ok = kubeconfig(allowed, 'ok', 'https://10.0.0.1:6443', {
      token: 't',
    });
    const elsewhere = kubeconfig(
      outside,
      'elsewhere',
      'https://10.0.0.2:6443',
      {
        token: 't',
      },
    );
    const moved = kubeconfig(allowed, 'moved', 'https://10.0.0.9:6443', {
      token: 't',
    });
    const exec = kubeconfig(allowed, 'exec', 'https://10.0.0.4:6443', {
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'true' },
    });
    const records = [
      cluster('ok', 'https://10.0.0.1:6443', ok),
      cluster('down', 'https://10.0.0.1:6443', ok, { status: 'OFFLINE' }),
      cluster('hidden', 'https://10.0.0.1:6443', null),
      cluster('elsewhere', 'https://10.0.0.2:6443', elsewhere),
      cluster('moved', 'https://10.0.0.3:6443', moved),
      cluster('manual-exec', 'https://10.0.0.4:6443', exec, {
        source: 'manual',
      }),
      cluster('discovered-exec', 'https://10.0.0.4:6443', exec),
    ];
    const strict = supplier(async () => records).clusters;
    expect((await strict.getClusters()).map(c => c.name)).toEqual([
      'discovered-exec',
      'ok',
    ]);
    const lenient = supplier(async () => records, {
      allowExecForManual: true,
    }).clusters;
    expect((await lenient.getClusters()).map(c => c.name)).toEqual([
      'discovered-exec',
      'manual-exec',
      'ok',
    ]);
  });

  it('keeps the list for the refresh interval, then follows Fleet; keeps the last list while Fleet does not answer', async () => {
    const ref = kubeconfig(allowed, 'a', 'https://10.0.0.1:6443', {
      token: 't',
    });
    const refB = kubeconfig(allowed, 'b', 'https://10.0.0.2:6443', {
      token: 't',
    });
    let answer: () => Promise<Cluster[]> = async () => [
      cluster('a', 'https://10.0.0.1:6443', ref),
    ];
    let now = 0;
    const { clusters } = supplier(() => answer(), { now: () => now });
    expect((await clusters.getClusters()).map(c => c.name)).toEqual(['a']);
    answer = async () => [
      cluster('a', 'https://10.0.0.1:6443', ref, { status: 'OFFLINE' }),
      cluster('b', 'https://10.0.0.2:6443', refB),
    ];
    now = 29_000;
    expect((await clusters.getClusters()).map(c => c.name)).toEqual(['a']);
    now = 31_000;
    expect((await clusters.getClusters()).map(c => c.name)).toEqual(['b']);
    expect(await clusters.kubeConfigFor('a')).toBeUndefined();
    answer = async () => {
      throw new Error('connect ECONNREFUSED');
    };
    now = 62_000;
    expect((await clusters.getClusters()).map(c => c.name)).toEqual(['b']);

    const fresh = supplier(() => answer()).clusters;
    await expect(fresh.getClusters()).rejects.toThrow(
      'Could not read the clusters from Fleet',
    );
  });
  it("tells which supplied clusters' latest Fleet probe failed: in the grace period or never up, not recovering", async () => {
    const ref = kubeconfig(allowed, 'a', 'https://10.0.0.1:6443', {
      token: 't',
    });
    const at = '2026-12-01T10:00:00.000Z';
    const { clusters } = supplier(async () => [
      cluster('ok', 'https://10.0.0.1:6443', ref),
      cluster('grace', 'https://10.0.0.1:6443', ref, {
        consecutiveFailures: 1,
        consecutiveSuccesses: 0,
        lastProbeAt: at,
      }),
      cluster('never-up', 'https://10.0.0.1:6443', ref, {
        status: 'UNKNOWN',
        consecutiveFailures: 3,
        consecutiveSuccesses: 0,
        lastProbeAt: at,
      }),
      // After a confirmed outage Fleet keeps the failure count while successes add up.
      cluster('recovering', 'https://10.0.0.1:6443', ref, {
        status: 'UNKNOWN',
        consecutiveFailures: 3,
        consecutiveSuccesses: 1,
        lastProbeAt: at,
      }),
    ]);
    expect((await clusters.getClusters()).map(c => c.name)).toEqual([
      'grace',
      'never-up',
      'ok',
      'recovering',
    ]);
    expect(clusters.probeFailure('grace')).toEqual({
      consecutiveFailures: 1,
      lastProbeAt: at,
    });
    expect(clusters.probeFailure('never-up')).toEqual({
      consecutiveFailures: 3,
      lastProbeAt: at,
    });
    expect(clusters.probeFailure('ok')).toBeUndefined();
    expect(clusters.probeFailure('recovering')).toBeUndefined();
  });
});

describe('FleetAuthStrategy', () => {
  it("signs with the cluster's own kubeconfig user: a token or a client certificate; refuses a password", async () => {
    const withToken = kubeconfig(allowed, 'tok', 'https://10.0.0.1:6443', {
      token: 'the-token',
    });
    const withCert = kubeconfig(allowed, 'cert', 'https://10.0.0.2:6443', {
      'client-certificate-data': Buffer.from('CERT').toString('base64'),
      'client-key-data': Buffer.from('KEY').toString('base64'),
    });
    const withPassword = kubeconfig(allowed, 'basic', 'https://10.0.0.3:6443', {
      username: 'admin',
      password: 'secret',
    });
    const { clusters, auth } = supplier(async () => [
      cluster('tok', 'https://10.0.0.1:6443', withToken),
      cluster('cert', 'https://10.0.0.2:6443', withCert),
      cluster('basic', 'https://10.0.0.3:6443', withPassword),
    ]);
    const details = await clusters.getClusters();
    const of = (name: string) => details.find(d => d.name === name)!;
    const request = { auth: {} } as any;
    expect(await auth.getCredential(of('tok'), request)).toEqual({
      type: 'bearer token',
      token: 'the-token',
    });
    expect(await auth.getCredential(of('cert'), request)).toEqual({
      type: 'x509 client certificate',
      cert: 'CERT',
      key: 'KEY',
    });
    await expect(auth.getCredential(of('basic'), request)).rejects.toThrow(
      'username and password',
    );
    await expect(
      auth.getCredential({ ...of('tok'), name: 'unknown' }, request),
    ).rejects.toThrow(
      "Cluster 'unknown' is not one of Fleet's usable clusters",
    );
    expect(auth.validateCluster()).toEqual([]);
    expect(auth.presentAuthMetadata({ token: 'x' })).toEqual({});
  });
});
