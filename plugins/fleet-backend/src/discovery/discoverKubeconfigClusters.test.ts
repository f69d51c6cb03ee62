import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import {
  discoverKubeconfigClusters,
  type KubeconfigReadCache,
} from './discoverKubeconfigClusters';

function kubeconfig(contexts: Array<{ name: string; server: string }>) {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: contexts.map(c => ({
      name: `${c.name}-cluster`,
      cluster: { server: c.server },
    })),
    users: [{ name: 'u', user: { token: 'secret-token' } }],
    contexts: contexts.map(c => ({
      name: c.name,
      context: { cluster: `${c.name}-cluster`, user: 'u' },
    })),
    'current-context': contexts[0]?.name,
  });
}

describe('discoverKubeconfigClusters', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-discovery-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('makes every context of every file a cluster, named DNS-1123-safe', async () => {
    fs.writeFileSync(
      path.join(dir, 'a.yaml'),
      kubeconfig([
        { name: 'prod-eu', server: 'https://10.0.0.1:6443' },
        { name: 'Staging_US', server: 'https://10.0.0.2:6443' },
      ]),
    );
    fs.writeFileSync(
      path.join(dir, 'b'),
      kubeconfig([{ name: 'dev', server: 'https://10.0.0.3:6443' }]),
    );
    const result = await discoverKubeconfigClusters({ kubeconfigDir: dir });
    expect(result.warnings).toEqual([]);
    expect(result.clusters).toEqual([
      {
        name: 'prod-eu',
        endpoint: 'https://10.0.0.1:6443',
        kubeconfigRef: path.join(dir, 'a.yaml'),
        context: 'prod-eu',
        identityCa: 'none',
      },
      {
        name: 'staging-us',
        endpoint: 'https://10.0.0.2:6443',
        kubeconfigRef: path.join(dir, 'a.yaml'),
        context: 'Staging_US',
        identityCa: 'none',
      },
      {
        name: 'dev',
        endpoint: 'https://10.0.0.3:6443',
        kubeconfigRef: path.join(dir, 'b'),
        context: 'dev',
        identityCa: 'none',
      },
    ]);
    expect(JSON.stringify(result)).not.toContain('secret-token');
  });

  it('skips a malformed or unreadable file with a warning naming it, and still discovers the others', async () => {
    fs.writeFileSync(
      path.join(dir, '1-good.yaml'),
      kubeconfig([{ name: 'good', server: 'https://10.0.0.1:6443' }]),
    );
    fs.writeFileSync(
      path.join(dir, '2-broken.yaml'),
      'apiVersion: v1\nclusters: [ {name: x\n  ::: not yaml',
    );
    fs.writeFileSync(path.join(dir, '3-empty.yaml'), '');
    fs.symlinkSync(
      path.join(dir, 'gone.yaml'),
      path.join(dir, '4-dangling.yaml'),
    );
    fs.writeFileSync(
      path.join(dir, '5-noserver.yaml'),
      kubeconfig([{ name: 'noserver', server: '' }]),
    );
    fs.writeFileSync(
      path.join(dir, '6-also-good.yaml'),
      kubeconfig([{ name: 'also-good', server: 'https://10.0.0.2:6443' }]),
    );
    const result = await discoverKubeconfigClusters({
      kubeconfigDir: dir,
      kubeconfigPath: path.join(dir, 'missing.yaml'),
    });
    expect(result.clusters.map(c => c.name)).toEqual(['good', 'also-good']);
    for (const file of [
      'missing.yaml',
      '2-broken.yaml',
      '3-empty.yaml',
      '4-dangling.yaml',
      '5-noserver.yaml',
    ]) {
      expect(result.warnings).toContainEqual(
        expect.stringContaining(path.join(dir, file)),
      );
    }
    expect(result.warnings).toHaveLength(5);
  });

  it('never quotes the file in the warning for one that does not parse (it may hold a token)', async () => {
    fs.writeFileSync(
      path.join(dir, 'leaky.yaml'),
      [
        'apiVersion: v1',
        'users:',
        '- name: u',
        '  user:',
        '    token: s3cr3t-t0ken-value',
        '   bad: indentation',
      ].join('\n'),
    );
    const result = await discoverKubeconfigClusters({ kubeconfigDir: dir });
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toContain(path.join(dir, 'leaky.yaml'));
    expect(result.warnings[0]).not.toContain('s3cr3t');
    expect(result.warnings[0]).not.toContain('\n');
  });

  it('does not read a file again while it is unchanged, and reads it again once rewritten or replaced', async () => {
    const a = path.join(dir, 'a.yaml');
    fs.writeFileSync(
      a,
      kubeconfig([{ name: 'prod', server: 'https://10.0.0.1:6443' }]),
    );
    // A file changed within the last second is read again each time (it may change again
    // within its timestamps' tick): older, it is kept.
    await new Promise(resolve => setTimeout(resolve, 1_100));
    const cache: KubeconfigReadCache = new Map();
    const endpoints = async () =>
      (
        await discoverKubeconfigClusters({ kubeconfigDir: dir }, [], [], cache)
      ).clusters.map(c => c.endpoint);
    expect(await endpoints()).toEqual(['https://10.0.0.1:6443']);
    // What the cache holds is what an unchanged file gives: marked, it shows it was not read.
    const entry = cache.get(a)!;
    if (entry.read.kind !== 'ok') throw new Error('expected a read');
    entry.read.contexts[0].server = 'https://cached.example:6443';
    expect(await endpoints()).toEqual(['https://cached.example:6443']);

    // Rewritten in place (same size, same inode): its change time moves, it is read again.
    fs.writeFileSync(
      a,
      kubeconfig([{ name: 'prod', server: 'https://10.0.0.9:6443' }]),
    );
    expect(await endpoints()).toEqual(['https://10.0.0.9:6443']);
    // Replaced by a rename, as tools that write kubeconfigs atomically do.
    const tmp = path.join(os.tmpdir(), `fleet-discovery-${process.pid}.yaml`);
    fs.writeFileSync(
      tmp,
      kubeconfig([{ name: 'prod', server: 'https://10.0.0.8:6443' }]),
    );
    fs.renameSync(tmp, a);
    expect(await endpoints()).toEqual(['https://10.0.0.8:6443']);
    // A file gone is forgotten.
    fs.rmSync(a);
    expect(await endpoints()).toEqual([]);
    expect(cache.size).toBe(0);
  });

  it('reads a kubeconfig that names a CA file each time: the CA may change alone', async () => {
    const ca = path.join(dir, 'ca.crt');
    fs.writeFileSync(ca, 'first CA');
    const a = path.join(dir, 'a.yaml');
    fs.writeFileSync(
      a,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: {
              server: 'https://10.0.0.1:6443',
              'certificate-authority': ca,
            },
          },
        ],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'prod', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'prod',
      }),
    );
    await new Promise(resolve => setTimeout(resolve, 1_100)); // old enough to be kept
    const cache: KubeconfigReadCache = new Map();
    const ca1 = (
      await discoverKubeconfigClusters({ kubeconfigPath: a }, [], [], cache)
    ).clusters[0].identityCa;
    fs.writeFileSync(ca, 'a rotated CA');
    const ca2 = (
      await discoverKubeconfigClusters({ kubeconfigPath: a }, [], [], cache)
    ).clusters[0].identityCa;
    expect(ca1).toMatch(/^sha256:/);
    expect(ca2).toMatch(/^sha256:/);
    expect(ca2).not.toBe(ca1);
  });

  it('gives a stable suffix to a name that collides across files, with a warning', async () => {
    fs.writeFileSync(
      path.join(dir, 'a.yaml'),
      kubeconfig([{ name: 'prod', server: 'https://10.0.0.1:6443' }]),
    );
    fs.writeFileSync(
      path.join(dir, 'b.yaml'),
      kubeconfig([{ name: 'PROD', server: 'https://10.0.0.2:6443' }]),
    );
    const first = await discoverKubeconfigClusters({ kubeconfigDir: dir });
    const second = await discoverKubeconfigClusters({ kubeconfigDir: dir });
    expect(first.clusters[0].name).toBe('prod');
    expect(first.clusters[1].name).toMatch(/^prod-[0-9a-f]{8}$/);
    expect(second.clusters).toEqual(first.clusters);
    expect(first.warnings).toHaveLength(1);
    expect(first.warnings[0]).toContain(path.join(dir, 'b.yaml'));
  });

  it('keeps a known cluster its name when a new file that sorts earlier names the same context', async () => {
    const b = path.join(dir, 'b.yaml');
    fs.writeFileSync(
      b,
      kubeconfig([{ name: 'prod', server: 'https://b.example:6443' }]),
    );
    const first = await discoverKubeconfigClusters({ kubeconfigDir: dir });
    expect(first.clusters).toEqual([
      expect.objectContaining({
        name: 'prod',
        endpoint: 'https://b.example:6443',
      }),
    ]);

    const a = path.join(dir, 'a.yaml');
    fs.writeFileSync(
      a,
      kubeconfig([{ name: 'prod', server: 'https://a.example:6443' }]),
    );
    const again = await discoverKubeconfigClusters(
      { kubeconfigDir: dir },
      first.clusters,
    );
    const byEndpoint = Object.fromEntries(
      again.clusters.map(c => [c.endpoint, c.name]),
    );
    expect(byEndpoint['https://b.example:6443']).toBe('prod');
    expect(byEndpoint['https://a.example:6443']).toMatch(/^prod-[0-9a-f]{8}$/);
    expect(again.warnings).toEqual([
      expect.stringContaining(
        `Context 'prod' of kubeconfig file ${a} collides`,
      ),
    ]);

    // Once b.yaml is gone, its name is free: the same context elsewhere may take it.
    fs.rmSync(b);
    const afterRemoval = await discoverKubeconfigClusters(
      { kubeconfigDir: dir },
      again.clusters,
    );
    expect(afterRemoval.clusters).toEqual([
      expect.objectContaining({
        name: byEndpoint['https://a.example:6443'],
        endpoint: 'https://a.example:6443',
      }),
    ]);
  });

  it('reads one file given by kubeconfigPath', async () => {
    const file = path.join(dir, 'config');
    fs.writeFileSync(
      file,
      kubeconfig([{ name: 'solo', server: 'https://10.0.0.9:6443' }]),
    );
    const result = await discoverKubeconfigClusters({ kubeconfigPath: file });
    expect(result.clusters).toEqual([
      {
        name: 'solo',
        endpoint: 'https://10.0.0.9:6443',
        kubeconfigRef: file,
        context: 'solo',
        identityCa: 'none',
      },
    ]);
  });
  it('skips special files and context names with control characters, and reads the rest', async () => {
    const { execFileSync } = require('node:child_process');
    execFileSync('mkfifo', [path.join(dir, '0-fifo')]);
    fs.symlinkSync('/dev/zero', path.join(dir, '0-zero'));
    fs.symlinkSync(path.join(dir, '0-fifo'), path.join(dir, '0-fifo-link'));
    fs.writeFileSync(
      path.join(dir, '1-nul.yaml'),
      kubeconfig([
        { name: 'bad\u0000name', server: 'https://10.0.0.1:6443' },
        { name: 'fine', server: 'https://10.0.0.2:6443' },
      ]),
    );
    const result = await discoverKubeconfigClusters({ kubeconfigDir: dir });
    expect(result.clusters.map(c => c.name)).toEqual(['fine']);
    // the FIFO itself is not even listed (not a file); through a symlink it would be warned like /dev/zero
    expect(
      result.warnings.some(
        w => w.includes('0-zero') && w.includes('not a regular file'),
      ),
    ).toBe(true);
    expect(
      result.warnings.some(
        w => w.includes('0-fifo-link') && w.includes('not a regular file'),
      ),
    ).toBe(true);
    expect(result.warnings.some(w => w.includes('NUL character'))).toBe(true);
  });
});
