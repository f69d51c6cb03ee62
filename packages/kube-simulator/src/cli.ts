/**
 * `kube-simulator --clusters N --out <dir> [--port P] [--ready-delay-ms MS] [--names a,b,c]
 *   [--rollouts <names|none|all>] [--istio <names|none|all>] [--prometheus-port P]
 *   [--watch-history N] [--watch-tick-ms MS]`
 *
 * `--rollouts` names the clusters with the Argo Rollouts CRDs (default: all),
 * `--istio` those with Istio's VirtualService CRD (default: none);
 * `--prometheus-port` starts the Prometheus query endpoint (0: a free port);
 * `--watch-history` sets the changes kept per cluster for watches (default 1000),
 * `--watch-tick-ms` how often the controllers of a watched cluster run (default 1000).
 *
 * Starts the simulator, prints one line per cluster and a `ready` line, then
 * runs until SIGINT/SIGTERM and stops cleanly. Bad arguments exit with 2.
 */
import { KubeSimulator, KubeSimulatorOptions } from './KubeSimulator';

export const USAGE =
  'usage: kube-simulator --clusters N --out <dir> [--port P] [--ready-delay-ms MS] [--names a,b,c] [--rollouts <names|none|all>] [--istio <names|none|all>] [--prometheus-port P] [--watch-history N] [--watch-tick-ms MS]';

export class UsageError extends Error {}

function integer(
  flag: string,
  value: string | undefined,
  min: number,
  max: number,
): number {
  if (value === undefined || !/^\d+$/.test(value)) {
    throw new UsageError(
      `${flag}: expected an integer, got ${JSON.stringify(value ?? '')}`,
    );
  }
  const n = Number(value);
  if (n < min || n > max)
    throw new UsageError(
      `${flag}: must be between ${min} and ${max}, got ${n}`,
    );
  return n;
}

export function parseArgs(argv: string[]): KubeSimulatorOptions {
  const values = readFlags(argv);
  const out = values.get('--out');
  if (!out)
    throw new UsageError('--out: required (directory for the kubeconfigs)');
  const clusters = clustersOf(values);
  const options: KubeSimulatorOptions = { clusters, outDir: out };
  readNumbers(values, options);
  const crds = crdsOf(values, clusters);
  if (crds) options.crds = crds;
  return options;
}

/** Each flag's value (`--flag value` or `--flag=value`), each flag known and given once. */
function readFlags(argv: string[]): Map<string, string> {
  const values = new Map<string, string>();
  const known = [
    '--clusters',
    '--out',
    '--port',
    '--ready-delay-ms',
    '--names',
    '--rollouts',
    '--istio',
    '--prometheus-port',
    '--watch-history',
    '--watch-tick-ms',
  ];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    if (!known.includes(flag)) throw new UsageError(`${flag}: unknown flag`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith('--'))) {
      throw new UsageError(`${flag}: missing value`);
    }
    if (values.has(flag)) throw new UsageError(`${flag}: given more than once`);
    values.set(flag, value);
  }
  return values;
}

/** `--names`, or `--clusters` (a count): the clusters to simulate. */
function clustersOf(values: Map<string, string>): number | string[] {
  const namesArg = values.get('--names');
  const countArg = values.get('--clusters');
  if (namesArg !== undefined) {
    const names = namesArg.split(',').map(s => s.trim());
    const bad = names.find(
      n => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n) || n.length > 63,
    );
    if (bad !== undefined)
      throw new UsageError(
        `--names: ${JSON.stringify(bad)} is not a DNS-1123 label`,
      );
    if (new Set(names).size !== names.length)
      throw new UsageError('--names: names must be unique');
    if (
      countArg !== undefined &&
      integer('--clusters', countArg, 0, 10000) !== names.length
    ) {
      throw new UsageError(
        `--clusters: ${countArg} does not match the ${names.length} names of --names`,
      );
    }
    return names;
  }
  if (countArg !== undefined) return integer('--clusters', countArg, 1, 10000);
  throw new UsageError('--clusters: required (or --names)');
}

/** The numeric flags: port, readiness delay, Prometheus port, watch settings. */
function readNumbers(
  values: Map<string, string>,
  options: KubeSimulatorOptions,
) {
  if (values.has('--port'))
    options.port = integer('--port', values.get('--port'), 0, 65535);
  if (values.has('--ready-delay-ms')) {
    options.readyDelayMs = integer(
      '--ready-delay-ms',
      values.get('--ready-delay-ms'),
      0,
      3_600_000,
    );
  }
  if (values.has('--prometheus-port')) {
    options.prometheusPort = integer(
      '--prometheus-port',
      values.get('--prometheus-port'),
      0,
      65535,
    );
  }
  if (values.has('--watch-history') || values.has('--watch-tick-ms')) {
    options.watch = {};
    if (values.has('--watch-history'))
      options.watch.historyLimit = integer(
        '--watch-history',
        values.get('--watch-history'),
        1,
        1_000_000,
      );
    if (values.has('--watch-tick-ms'))
      options.watch.controllerTickMs = integer(
        '--watch-tick-ms',
        values.get('--watch-tick-ms'),
        1,
        3_600_000,
      );
  }
}

/** `--rollouts` and `--istio`: each cluster's CRDs, when either is given. */
function crdsOf(
  values: Map<string, string>,
  clusters: number | string[],
): Record<string, string[]> | undefined {
  const all =
    typeof clusters === 'number'
      ? Array.from({ length: clusters }, (_, i) => `sim-${i + 1}`)
      : clusters;
  const pick = (flag: string): string[] | undefined => {
    const value = values.get(flag);
    if (value === undefined) return undefined;
    if (value === 'none') return [];
    if (value === 'all') return all;
    const names = value.split(',').map(s => s.trim());
    const unknown = names.find(n => !all.includes(n));
    if (unknown !== undefined)
      throw new UsageError(
        `${flag}: ${JSON.stringify(unknown)} is not one of the clusters`,
      );
    return names;
  };
  const rollouts = pick('--rollouts');
  const istio = pick('--istio');
  if (rollouts !== undefined || istio !== undefined) {
    const crds: Record<string, string[]> = {};
    for (const name of all) {
      const list: string[] = [];
      if (rollouts === undefined || rollouts.includes(name))
        list.push('rollouts.argoproj.io');
      if (istio?.includes(name))
        list.push('virtualservices.networking.istio.io');
      crds[name] = list;
    }
    return crds;
  }
  return undefined;
}

export async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let options: KubeSimulatorOptions;
  try {
    options = parseArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`kube-simulator: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    throw e;
  }
  const sim = await KubeSimulator.start(options);
  for (const name of sim.clusterNames()) {
    process.stdout.write(
      `cluster ${name} ${sim.endpoint(name)} ${sim.kubeconfigPath(name)}\n`,
    );
  }
  if (sim.prometheusUrl)
    process.stdout.write(`prometheus ${sim.prometheusUrl}\n`);
  process.stdout.write(
    `ready ${sim.url} ${sim.clusterNames().length} cluster(s), kubeconfigs in ${
      sim.kubeconfigDir
    }\n`,
  );
  await new Promise<void>(done => {
    const stop = (signal: NodeJS.Signals) => {
      process.stdout.write(`stopping (${signal})\n`);
      done();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await sim.stop();
  process.stdout.write('stopped\n');
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    code => {
      process.exitCode = code;
    },
    err => {
      process.stderr.write(
        `kube-simulator: ${(err as Error).stack ?? String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
