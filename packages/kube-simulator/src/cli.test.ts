import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, UsageError } from './cli';

const BIN = resolve(__dirname, '../bin/kube-simulator');

function run(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', c => {
    stdout += c;
  });
  child.stderr.on('data', c => {
    stderr += c;
  });
  const exited = new Promise<number | null>(done =>
    child.on('exit', code => done(code)),
  );
  return { child, exited, out: () => stdout, err: () => stderr };
}

async function waitFor(check: () => boolean, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise(r => setTimeout(r, 25));
  }
}

describe('parseArgs', () => {
  it('parses the CRD and Prometheus flags', () => {
    expect(
      parseArgs([
        '--names',
        'a,b,c',
        '--out',
        '/tmp/x',
        '--rollouts',
        'a,b',
        '--istio',
        'b',
        '--prometheus-port',
        '0',
      ]),
    ).toEqual({
      clusters: ['a', 'b', 'c'],
      outDir: '/tmp/x',
      prometheusPort: 0,
      crds: {
        a: ['rollouts.argoproj.io'],
        b: ['rollouts.argoproj.io', 'virtualservices.networking.istio.io'],
        c: [],
      },
    });
    expect(
      parseArgs(['--clusters', '2', '--out', '/tmp/x', '--rollouts', 'none'])
        .crds,
    ).toEqual({ 'sim-1': [], 'sim-2': [] });
    expect(() =>
      parseArgs(['--clusters', '2', '--out', '/tmp/x', '--istio', 'sim-9']),
    ).toThrow(UsageError);
  });

  it('parses the watch flags', () => {
    expect(
      parseArgs([
        '--clusters',
        '1',
        '--out',
        '/tmp/x',
        '--watch-history',
        '50',
        '--watch-tick-ms=2000',
      ]).watch,
    ).toEqual({ historyLimit: 50, controllerTickMs: 2000 });
    expect(parseArgs(['--clusters', '1', '--out', '/tmp/x']).watch).toBe(
      undefined,
    );
    expect(() =>
      parseArgs(['--clusters', '1', '--out', '/tmp/x', '--watch-history', '0']),
    ).toThrow('--watch-history: must be between 1 and 1000000, got 0');
  });

  it('parses the documented flags', () => {
    expect(parseArgs(['--clusters', '3', '--out', '/tmp/x'])).toEqual({
      clusters: 3,
      outDir: '/tmp/x',
    });
    expect(
      parseArgs([
        '--names',
        'a,b',
        '--out=/o',
        '--port',
        '0',
        '--ready-delay-ms',
        '50',
      ]),
    ).toEqual({
      clusters: ['a', 'b'],
      outDir: '/o',
      port: 0,
      readyDelayMs: 50,
    });
  });

  it.each([
    [['--clusters', 'abc', '--out', '/o'], '--clusters'],
    [['--clusters', '2'], '--out'],
    [['--clusters', '2', '--out', '/o', '--port', '70000'], '--port'],
    [['--clusters', '2', '--out', '/o', '--bogus', '1'], '--bogus'],
    [['--names', 'ok,Not_OK', '--out', '/o'], '--names'],
    [
      ['--clusters', '1', '--out', '/o', '--ready-delay-ms', '-5'],
      '--ready-delay-ms',
    ],
  ])('rejects %j naming %s', (args, flag) => {
    expect(() => parseArgs(args)).toThrow(UsageError);
    expect(() => parseArgs(args)).toThrow(flag);
  });
});

describe('kube-simulator CLI', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kube-sim-cli-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes kubeconfigs, prints ready, serves, and stops on SIGTERM', async () => {
    const proc = run([
      '--clusters',
      '2',
      '--out',
      dir,
      '--ready-delay-ms',
      '0',
    ]);
    try {
      await waitFor(() => /^ready /m.test(proc.out()), 15_000);
    } catch (e) {
      proc.child.kill('SIGKILL');
      throw new Error(`no ready line: ${proc.out()} ${proc.err()}`);
    }
    const lines = proc.out().trim().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(
        `^cluster sim-1 https://127\\.0\\.0\\.1:\\d+/clusters/sim-1 ${dir}/sim-1\\.yaml$`,
      ),
    );
    expect(lines[1]).toMatch(/^cluster sim-2 /);
    expect(existsSync(join(dir, 'sim-2.yaml'))).toBe(true);
    const kc = new KubeConfig();
    kc.loadFromFile(join(dir, 'sim-2.yaml'));
    const list = await kc.makeApiClient(CoreV1Api).listNamespace();
    expect(list.items.length).toBeGreaterThanOrEqual(3);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    expect(proc.out()).toMatch(/stopped\n$/);
  });

  it('exits 2 with a message naming the bad flag', async () => {
    const proc = run(['--clusters', 'many', '--out', dir]);
    expect(await proc.exited).toBe(2);
    expect(proc.err()).toContain('--clusters');
  });
});
