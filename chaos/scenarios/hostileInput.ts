/*
 * A hostile-input corpus against a running backend (its own process, PostgreSQL): malformed and
 * huge kubeconfigs in the discovery directory, 1 MB bodies, odd Unicode names, path-traversal
 * references and entity refs. No crash, no 500, nothing lost, no secret in any answer.
 */
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { seedDeployments, startSimulator } from '@cnp/fleet-harness';
import {
  CHAOS_READY_DELAY_MS,
  short,
  startFleetBackend,
  tempDir,
} from '../lib';
import type { KubeSimulator } from '@cnp/kube-simulator';
import type { Scenario } from '../lib';
import { kubeRequest } from '../lib/kubeRequest';
import { tenantCrossing } from './tenantCrossing';

/** fleet.clusters.maxManual for this run: above what the corpus registers, reached at the end. */
const MAX_MANUAL = 80;

const ODD_NAMES = [
  'prod-🚀',
  'ünïcødé',
  '\u202Eevil-rtl',
  'zero\u200Bwidth',
  '名前',
  '../../etc/passwd',
  '..',
  'a'.repeat(250),
  '-leading-dash',
  'UPPER_case',
  ' spaced name ',
  '🔥🔥🔥',
  'new\nline',
  'CON',
  'e\u0301t\u00e9', // a combining accent and a precomposed one
];

/** The database's own words at the end of a knex error ("<sql> - <message>"), without colours. */
function pgMessage(text: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = text.replace(/\u001b\[[0-9;]*m/g, '');
  const at = plain.lastIndexOf(' - ');
  return (at >= 0 ? plain.slice(at + 3) : plain)
    .split(/\s+type=|\s+name=/)[0]
    .trim();
}

function kubeconfig(
  contexts: Array<{
    name: string;
    server: string;
    token?: string;
    ca?: string;
  }>,
  extra: Record<string, unknown> = {},
) {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    ...extra,
    clusters: contexts.map((c, i) => ({
      name: `cluster-${i}`,
      cluster: {
        server: c.server,
        ...(c.ca ? { 'certificate-authority-data': c.ca } : {}),
      },
    })),
    users: contexts.map((c, i) => ({
      name: `user-${i}`,
      user: { token: c.token ?? 'not-a-real-token' },
    })),
    contexts: contexts.map((c, i) => ({
      name: c.name,
      context: { cluster: `cluster-${i}`, user: `user-${i}` },
    })),
    'current-context': contexts[0]?.name,
  });
}

function billionLaughs(): string {
  let text =
    'apiVersion: v1\nkind: Config\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  let previous = 'a';
  for (let i = 0; i < 9; i++) {
    const name = String.fromCharCode(98 + i);
    text += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]\n`;
    previous = name;
  }
  return `${text}clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: bomb\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n    token: t\n`;
}

/** Writes the hostile kubeconfig files; returns what was written, for the table. */
function writeHostileKubeconfigs(dir: string, sim: KubeSimulator): string[] {
  const ca = Buffer.from(sim.caPem).toString('base64');
  const written: string[] = [];
  const write = (name: string, content: string | Buffer, what: string) => {
    writeFileSync(path.join(dir, name), content, { mode: 0o600 });
    written.push(what);
  };
  write(
    'malformed.yaml',
    'apiVersion: v1\nclusters: [ {name: x\n  ::: not yaml',
    'malformed YAML',
  );
  write('empty.yaml', '', 'empty file');
  write('whitespace.yaml', '\n\n   \n', 'whitespace only');
  write('binary.yaml', randomBytes(256 * 1024), '256 KiB of random bytes');
  write('list.yaml', '- 1\n- 2\n', 'a YAML list');
  write(
    'wrong-types.json',
    JSON.stringify({
      apiVersion: 'v1',
      clusters: 'nope',
      contexts: 42,
      users: null,
    }),
    'wrong field types',
  );
  write(
    'no-server.yaml',
    kubeconfig([{ name: 'no-server', server: '' }]),
    'a context without server',
  );
  write('bomb.yaml', billionLaughs(), 'a YAML alias bomb (billion laughs)');
  // 8 MB: a working kubeconfig padded with a huge unknown field (its own API server: one API
  // server is one cluster, whatever its contexts are called).
  write(
    'huge.yaml',
    kubeconfig(
      [
        {
          name: 'huge-ok',
          server: sim.endpoint('huge'),
          token: sim.token('huge'),
          ca,
        },
      ],
      {
        'x-padding': 'x'.repeat(8 * 1024 * 1024),
      },
    ),
    'an 8 MB kubeconfig (works)',
  );
  // 100 contexts pointing at a closed loopback port.
  write(
    'many-contexts.yaml',
    kubeconfig(
      Array.from({ length: 100 }, (_, i) => ({
        name: `many-${i}`,
        server: `https://127.0.0.1:1/many-${i}`,
      })),
    ),
    '100 contexts (unreachable)',
  );
  // Odd Unicode context names, each on an API server of its own.
  write(
    'odd-names.yaml',
    kubeconfig(
      ODD_NAMES.map((name, i) => ({
        name,
        server: sim.endpoint(`odd-${i}`),
        token: sim.token(`odd-${i}`),
        ca,
      })),
    ),
    `${ODD_NAMES.length} odd context names (Unicode, RTL override, zero-width, newline, '../../etc/passwd', 250 chars)`,
  );
  write(
    'ünï cødé 🚀 file.yaml',
    kubeconfig([
      {
        name: 'from-unicode-file',
        server: sim.endpoint('unicode'),
        token: sim.token('unicode'),
        ca,
      },
    ]),
    'a Unicode file name with spaces',
  );
  // A context whose server is a traversal-looking URL on the simulator.
  write(
    'traversal-server.yaml',
    kubeconfig([
      {
        name: 'traversal-server',
        server: `${sim.url}/clusters/../clusters/good-1/../../_sim/clusters`,
        token: sim.token('good-1'),
        ca,
      },
    ]),
    'a server URL with ../ segments',
  );
  symlinkSync('/etc/passwd', path.join(dir, 'link-to-passwd.yaml'));
  written.push('a symlink to /etc/passwd');
  symlinkSync(path.join(dir, 'gone.yaml'), path.join(dir, 'dangling.yaml'));
  written.push('a dangling symlink');
  mkdirSync(path.join(dir, 'a-directory.yaml'));
  written.push('a directory named *.yaml');
  return written;
}

/** The label of the Secrets on the hub that discovery reads kubeconfigs from. */
const HUB_SECRET_LABEL = 'cnp.io/kubeconfig=true';

/**
 * Kubeconfigs held in Secrets of the hub cluster, hostile ones among them: malformed text around
 * a token-like marker, a kubeconfig naming /etc/passwd as its CA file, one running an exec
 * plugin, one without the key; referenced by hand (a missing Secret too) and discovered by label.
 * A good one is ONLINE, UNKNOWN while its Secret is deleted and ONLINE again once restored; the
 * others stay UNKNOWN with a reason, never OFFLINE; the plugin never runs. Answers the checks and
 * every content that must appear in no answer and no log line.
 */
async function hostileSecrets(options: {
  sim: KubeSimulator;
  call: (
    method: string,
    path: string,
    body?: unknown,
  ) => Promise<{
    status: number;
    json: any;
    text: string;
  }>;
  tmp: string;
  log: (line: string) => void;
}): Promise<{
  checks: Array<[boolean, string, unknown]>;
  contents: string[];
}> {
  const { sim, call, tmp } = options;
  const out: Array<[boolean, string, unknown]> = [];
  const marker = `s3cr3t-${randomBytes(12).toString('hex')}`;
  const execMarker = path.join(tmp, 'secret-exec-plugin-ran');
  const ca = Buffer.from(sim.caPem).toString('base64');
  const [key, value] = HUB_SECRET_LABEL.split('=');
  const labels = { [key]: value };
  const secretsPath = '/api/v1/namespaces/fleet-system/secrets';
  await kubeRequest(sim, 'hub', 'POST', '/api/v1/namespaces', {
    metadata: { name: 'fleet-system' },
  });
  const put = async (
    name: string,
    text: string,
    secretLabels?: Record<string, string>,
    dataKey = 'kubeconfig',
  ) =>
    kubeRequest(sim, 'hub', 'POST', secretsPath, {
      metadata: { name, labels: secretLabels },
      stringData: { [dataKey]: text },
    });
  const good = readFileSync(sim.kubeconfigPath('secret-good'), 'utf8');
  const hostile: Record<string, string> = {
    'secret-malformed': `clusters:\n- name: c\n  token: ${marker}\n  {{{{ [[[`,
    'secret-passwd': [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1", certificate-authority: /etc/passwd } }]`,
      `users: [{ name: u, user: { token: ${marker}-passwd } }]`,
      'contexts: [{ name: passwd-ctx, context: { cluster: c, user: u } }]',
      'current-context: passwd-ctx',
    ].join('\n'),
    'secret-exec': [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{ name: c, cluster: { server: "${sim.endpoint(
        'secret-exec',
      )}", certificate-authority-data: ${ca} } }]`,
      `users: [{ name: u, user: { exec: { apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: sh, args: ["-c", "touch ${execMarker}; exit 1"] } } }]`,
      'contexts: [{ name: secret-exec, context: { cluster: c, user: u } }]',
      'current-context: secret-exec',
    ].join('\n'),
  };
  const created = [
    await put('secret-good', good, labels),
    // Labelled: a manual reference is read only for a Secret discovery would read.
    await put(
      'secret-manual',
      readFileSync(sim.kubeconfigPath('secret-manual'), 'utf8'),
      labels,
    ),
    await put('secret-nokey', good, labels, 'other'),
    ...(await Promise.all(
      Object.entries(hostile).map(([name, text]) => put(name, text, labels)),
    )),
  ];
  out.push([
    created.every(status => status === 201),
    'the hub cluster stores the kubeconfig Secrets (good and hostile)',
    created,
  ]);
  const manual = {
    'by-secret': ['secret-manual', sim.endpoint('secret-manual')],
    'by-missing-secret': ['nope', 'https://missing.example:6443'],
    'by-malformed-secret': [
      'secret-malformed',
      'https://malformed.example:6443',
    ],
    'by-nokey-secret': ['secret-nokey', 'https://nokey.example:6443'],
  };
  const registered = await Promise.all(
    Object.entries(manual).map(([name, [secret, endpoint]]) =>
      call('POST', '/clusters', {
        name,
        endpoint,
        kubeconfigRef: `secret:fleet-system/${secret}`,
      }),
    ),
  );
  out.push([
    registered.every(a => a.status === 201),
    `${registered.length} manual registrations referencing Secrets (one missing, one malformed, one without the key) are accepted`,
    registered.map(a => a.status),
  ]);
  const cycle = async () => (await call('POST', '/health/run')).status;
  const cluster = async (name: string) =>
    (await call('GET', `/clusters/${name}`)).json;
  const cycles = [await cycle(), await cycle(), await cycle()];
  const byName = Object.fromEntries(
    await Promise.all(
      ['secret-good', 'secret-exec', 'passwd-ctx', ...Object.keys(manual)].map(
        async name => [name, await cluster(name)] as const,
      ),
    ),
  );
  out.push([
    cycles.every(s => s === 200) &&
      byName['secret-good']?.status === 'ONLINE' &&
      byName['secret-good']?.kubeconfigRef ===
        'secret:fleet-system/secret-good' &&
      byName['by-secret']?.status === 'ONLINE',
    'a cluster discovered from a labelled Secret and one registered with a Secret reference are ONLINE',
    `${byName['secret-good']?.status} ${byName['secret-good']?.kubeconfigRef}; by-secret ${byName['by-secret']?.status}`,
  ]);
  const unprobeable = [
    'by-missing-secret',
    'by-malformed-secret',
    'by-nokey-secret',
  ].map(name => byName[name]);
  out.push([
    unprobeable.every(
      c =>
        c?.status === 'UNKNOWN' &&
        /kubeconfig Secret 'fleet-system\//.test(c.statusReason ?? ''),
    ) &&
      // A kubeconfig Secret running a plugin is refused when read: never a usable cluster.
      (byName['secret-exec']?.name === undefined ||
        byName['secret-exec'].status === 'UNKNOWN') &&
      !existsSync(execMarker),
    'Secrets that are missing, malformed, without the key or running an exec plugin leave their clusters UNKNOWN with a reason naming the Secret, or undiscovered (never OFFLINE), and the plugin never runs',
    unprobeable.map(
      c => `${c?.name}:${c?.status}:${short(c?.statusReason, 80)}`,
    ),
  ]);
  out.push([
    byName['passwd-ctx'] === undefined ||
      byName['passwd-ctx'].status !== 'ONLINE',
    'a Secret naming /etc/passwd as its CA file is not discovered as a usable cluster',
    byName['passwd-ctx']?.status ?? 'not discovered',
  ]);
  // The good Secret is deleted, then restored: UNKNOWN meanwhile, never OFFLINE.
  const deleted = await kubeRequest(
    sim,
    'hub',
    'DELETE',
    `${secretsPath}/secret-manual`,
  );
  await cycle();
  await cycle();
  const whileGone = await cluster('by-secret');
  await put(
    'secret-manual',
    readFileSync(sim.kubeconfigPath('secret-manual'), 'utf8'),
    labels,
  );
  await cycle();
  const restored = await cluster('by-secret');
  out.push([
    deleted === 200 &&
      whileGone?.status === 'UNKNOWN' &&
      restored?.status === 'ONLINE',
    'a Secret-referenced cluster is UNKNOWN while its Secret is deleted and ONLINE once it is restored',
    `${deleted}; ${whileGone?.status} (${short(
      whileGone?.statusReason,
      80,
    )}) → ${restored?.status}`,
  ]);
  options.log(
    `kubeconfig Secrets on the hub: ${Object.keys(hostile).join(
      ', ',
    )}, secret-nokey; references: ${Object.keys(manual).join(', ')}`,
  );
  return {
    checks: out,
    contents: [
      marker,
      sim.token('secret-good'),
      sim.token('secret-manual'),
      sim.token('hub'),
      Buffer.from(good).toString('base64').slice(0, 60),
    ],
  };
}

export const hostileInput: Scenario = {
  id: 'hostile-input',
  title: 'Hostile-input corpus',
  tried:
    "in the discovery directory: malformed YAML, empty, binary, wrong types, an alias bomb, an 8 MB kubeconfig, 100 contexts, 15 odd Unicode context names (RTL override, zero-width, newline, 250 chars), context names of 300 characters and with NUL, a Unicode file name, symlinks to /etc/passwd and nowhere, namesake contexts on other API servers (in a file that sorts earlier; while the known file is unreadable); over HTTP (226 requests): 1 MB bodies on every write route, deeply nested JSON, odd Unicode and traversal names in bodies and paths, 14 path-traversal kubeconfigRefs, SQL-injection and oversized entity refs, bad auth headers, a manual registration of a discovered API server under a new name, a manual kubeconfig running an exec plugin, endpoints carrying Markdown or credentials; bad page limits and forged cursors on every paged list, manual registrations racing past fleet.clusters.maxManual, every read as a caller who is not a cluster admin; kubeconfig Secrets on the hub cluster (malformed around a token-like marker, a CA file of /etc/passwd, an exec plugin, no kubeconfig key, a missing Secret, one deleted and restored), discovered by label and referenced by hand; then a restart with all of it in place; then tenant crossing: 22 requests by a deployer of one project on another project's namespaces, Secrets, ConfigMaps, Ingress hosts, TLS Secrets and clusters, components of no project, and a deploy onto another tool's Deployment of the same name and into a namespace its project names only by a pattern",
  timeoutMs: 420_000,
  async run({ checks, db, tmp, log }) {
    const dir = tempDir('fleet-chaos-kubeconfigs-');
    // The simulator's own kubeconfigs stay beside: only good-1..3 are put where discovery reads;
    // the other simulated API servers are named by the hostile files (each its own server).
    const simDir = tempDir('fleet-chaos-sim-');
    const sim = await startSimulator({
      readyDelayMs: CHAOS_READY_DELAY_MS,
      clusters: [
        'good-1',
        'good-2',
        'good-3',
        'huge',
        'unicode',
        'late',
        'zz-after',
        'exec',
        'named-prod',
        'impostor',
        'impostor-2',
        'hub',
        'secret-good',
        'secret-manual',
        'secret-exec',
        ...ODD_NAMES.map((_, i) => `odd-${i}`),
      ],
      outDir: simDir,
    });
    for (const name of ['good-1', 'good-2', 'good-3'])
      copyFileSync(sim.kubeconfigPath(name), path.join(dir, `${name}.yaml`));
    const files = writeHostileKubeconfigs(dir, sim);
    // A kubeconfig whose user is an exec credential plugin, where manual references may point:
    // registering it must never run the program (it would leave the marker file).
    const execDir = tempDir('fleet-chaos-exec-');
    const execMarker = path.join(tmp, 'exec-plugin-ran');
    writeFileSync(
      path.join(execDir, 'exec.yaml'),
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{ name: c, cluster: { server: "${sim.endpoint(
          'exec',
        )}", certificate-authority-data: ${Buffer.from(sim.caPem).toString(
          'base64',
        )} } }]`,
        `users: [{ name: u, user: { exec: { apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: sh, args: ["-c", "touch ${execMarker}; exit 1"] } } }]`,
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        'current-context: x',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    log(`kubeconfig corpus: ${files.join('; ')}`);
    const knex = db.knex();
    const logFile = path.join(tmp, 'backend.log');

    let fleet;
    try {
      fleet = await startFleetBackend({
        db,
        kubeconfigDir: dir,
        fleet: {
          health: { probeTimeout: { seconds: 1 } },
          discovery: {
            allowedKubeconfigDirs: [execDir],
            secretSelector: HUB_SECRET_LABEL,
          },
          // Kubeconfigs held in Secrets are read from this cluster (see hostileSecrets).
          hub: { kubeconfigPath: sim.kubeconfigPath('hub') },
          clusters: { maxManual: MAX_MANUAL },
        },
        logFile,
      });
    } catch (error) {
      checks.ok(
        false,
        'the backend starts with the hostile kubeconfigs in its directory',
        (error as Error).message,
      );
      const tail = readFileSync(logFile, 'utf8')
        .split('\n')
        .filter(l => /error|Error/.test(l))
        .slice(-5);
      log(`backend log (errors): ${tail.join(' | ')}`);
      return;
    }
    const { call, answers } = fleet;
    // Started is not enough: the process must still run and answer once discovery has read them.
    // A dead backend makes fetch throw: that must fail this line, not only the scenario.
    const alive = await call('GET', '/clusters?limit=1').catch(error => ({
      status: 0,
      text: String((error as Error)?.cause ?? error),
      json: undefined as any,
    }));
    const running = checks.ok(
      !fleet.backend.exited() &&
        alive.status === 200 &&
        Array.isArray(alive.json?.items),
      `the backend started with ${files.length} hostile kubeconfig entries in its directory, still runs and answers GET /clusters with 200`,
      {
        exited: fleet.backend.exited(),
        status: alive.status,
        ...(alive.status === 0 ? { error: alive.text } : {}),
      },
    );
    if (!running) return;
    /** Every item of a paged list, following nextCursor (as `authorization`, if given). */
    const listAll = async (list: string, authorization?: string) => {
      const items: any[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 100; page++) {
        const query = new URLSearchParams({ limit: '1000' });
        if (cursor) query.set('cursor', cursor);
        const answer = await call(
          'GET',
          `${list}${list.includes('?') ? '&' : '?'}${query}`,
          undefined,
          authorization ? { headers: { Authorization: authorization } } : {},
        );
        items.push(...(answer.json?.items ?? []));
        cursor = answer.json?.nextCursor;
        if (!cursor) break;
      }
      return items;
    };
    const first = await call('POST', '/health/run');
    checks.ok(
      first.status === 200,
      'a health cycle over the discovered clusters answers 200',
      first.status,
    );

    const clusters = await listAll('/clusters');
    const names: string[] = clusters.map((c: any) => c.name);
    checks.ok(
      names.length > 0 &&
        names.every(
          n => /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n) && n.length <= 63,
        ),
      `every discovered cluster name is a DNS-1123 label (${names.length} clusters)`,
      names.filter(
        n => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n) || n.length > 63,
      ),
    );
    const good = clusters.filter((c: any) =>
      ['good-1', 'good-2', 'good-3', 'huge-ok', 'from-unicode-file'].includes(
        c.name,
      ),
    );
    checks.ok(
      good.length === 5 && good.every((c: any) => c.status === 'ONLINE'),
      'the good clusters, the 8 MB kubeconfig and the Unicode file name were discovered and are ONLINE',
      good.map((c: any) => `${c.name}:${c.status}`),
    );
    const oddEndpoints = ODD_NAMES.map((_, i) => sim.endpoint(`odd-${i}`));
    const oddOnline = clusters.filter((c: any) =>
      oddEndpoints.includes(c.endpoint),
    );
    checks.ok(
      oddOnline.length === ODD_NAMES.length,
      `each of the ${ODD_NAMES.length} odd context names became its own cluster`,
      oddOnline.map((c: any) => c.name),
    );

    // What must not be lost: deployments, applications and the good clusters, as seeded.
    await seedDeployments(knex, ['good-1', 'good-2', 'good-3'], 3, {
      appPrefix: 'precious',
    });
    const snapshot = async () =>
      JSON.stringify({
        apps: await knex('fleet_applications')
          .where('entity_ref', 'like', 'component:default/precious-%')
          .orderBy('id')
          .select('id', 'entity_ref', 'spec'),
        // The rows and whether an outage was cascaded to them; not the reconcile's verdict on
        // their workloads, which the seed writes to no cluster (WORKLOAD_UNHEALTHY once the
        // reconcile, 15 s after startup, comes after the seed on a loaded machine).
        deployments: (
          await knex('fleet_deployments')
            .where('cluster', 'in', ['good-1', 'good-2', 'good-3'])
            .orderBy('id')
            .select('id', 'cluster', 'status_reason', 'image')
        ).map(d => ({
          ...d,
          status_reason:
            d.status_reason === 'CLUSTER_OFFLINE' ? 'CLUSTER_OFFLINE' : null,
        })),
        clusters: await knex('fleet_clusters')
          .whereIn('name', ['good-1', 'good-2', 'good-3'])
          .orderBy('name')
          .select('name', 'endpoint', 'kubeconfig_ref', 'source', 'labels'),
      });
    const before = await snapshot();
    const eventsBefore = Number(
      (await knex('fleet_events').count({ n: '*' }).first())?.n,
    );

    // ---------------------------------------------------------------- the HTTP corpus
    const mb = 'x'.repeat(1024 * 1024);
    const corpus: Array<
      [
        string,
        string,
        unknown?,
        { headers?: Record<string, string>; raw?: boolean }?,
      ]
    > = [];
    // 1 MB bodies on every write route, as JSON, as broken JSON and as text.
    for (const [method, route] of [
      ['POST', '/clusters'],
      ['PATCH', '/clusters/good-1'],
      ['DELETE', '/clusters/good-1'],
      ['POST', '/applications'],
      ['POST', '/deployments'],
      ['POST', '/health/run'],
    ]) {
      corpus.push([method, route, { name: 'big', pad: mb }]);
      corpus.push([method, route, `{"name": "${mb}`, { raw: true }]);
      corpus.push([
        method,
        route,
        mb,
        { raw: true, headers: { 'Content-Type': 'text/plain' } },
      ]);
    }
    // Deeply nested JSON under the size limit.
    corpus.push([
      'POST',
      '/applications',
      `${'['.repeat(30000)}${']'.repeat(30000)}`,
      { raw: true },
    ]);
    corpus.push([
      'POST',
      '/applications',
      `{"entityRef":"component:default/deep","spec":${'{"a":'.repeat(
        6000,
      )}1${'}'.repeat(6000)}}`,
      { raw: true },
    ]);
    corpus.push([
      'POST',
      '/clusters',
      '{"name":"proto","endpoint":"https://127.0.0.1:1","kubeconfigRef":"secret:x","__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}',
      { raw: true },
    ]);
    // Odd names as cluster names, in bodies and in paths.
    for (const name of [...ODD_NAMES, 'nul\u0000byte', 'a'.repeat(300)]) {
      corpus.push([
        'POST',
        '/clusters',
        { name, endpoint: 'https://127.0.0.1:1', kubeconfigRef: 'secret:x' },
      ]);
      corpus.push(['GET', `/clusters/${encodeURIComponent(name)}`]);
      corpus.push(['GET', `/clusters/${encodeURIComponent(name)}/events`]);
      corpus.push([
        'PATCH',
        `/clusters/${encodeURIComponent(name)}`,
        { labels: { env: 'x' } },
      ]);
      corpus.push(['DELETE', `/clusters/${encodeURIComponent(name)}`]);
      corpus.push([
        'POST',
        '/deployments',
        { entityRef: `component:default/${name}`, cluster: 'good-1' },
      ]);
      corpus.push([
        'POST',
        '/deployments',
        { entityRef: 'component:default/hostile', cluster: name },
      ]);
      corpus.push([
        'GET',
        `/deployments?entityRef=${encodeURIComponent(name)}`,
      ]);
      corpus.push([
        'POST',
        '/clusters',
        {
          name: 'odd-labels',
          endpoint: 'https://127.0.0.1:1',
          kubeconfigRef: 'secret:x',
          labels: { [name]: name },
        },
      ]);
    }
    // Path traversal as kubeconfigRef (registered clusters must stay UNKNOWN, never opened).
    const traversalRefs = [
      '../../etc/passwd',
      '/etc/passwd',
      '/etc/shadow',
      '/proc/self/environ',
      `${dir}/../../../../etc/passwd`,
      `${dir}/link-to-passwd.yaml`,
      `${dir}/good-1.yaml/../../../etc/passwd`,
      'file:///etc/passwd',
      '\\\\server\\share\\kubeconfig',
      'C:\\Windows\\System32\\config\\SAM',
      '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      `${dir}/good-1.yaml`, // a real kubeconfig, but for another endpoint: never sent its token
      `${dir}/./good-2.yaml`,
      'apiVersion: v1\nkind: Config',
    ];
    traversalRefs.forEach((kubeconfigRef, i) => {
      corpus.push([
        'POST',
        '/clusters',
        // Each its own server URL: one API server is one cluster, and a reference Fleet does
        // not open leaves the endpoint alone as the identity.
        {
          name: `trav-${i}`,
          endpoint: `https://127.0.0.1:1/trav-${i}`,
          kubeconfigRef,
        },
      ]);
    });
    // Path traversal and injection in paths and queries.
    for (const p of [
      '/clusters/..%2F..%2Fetc%2Fpasswd',
      '/clusters/%2e%2e',
      '/clusters/good-1%00',
      '/clusters/good-1%2F..%2F..%2Fsummary',
      '/deployments/..%2F..%2Fetc%2Fpasswd/events',
      '/deployments/00000000-0000-0000-0000-000000000000/events',
      `/deployments?entityRef=${encodeURIComponent("' OR 1=1 --")}`,
      `/deployments?entityRef=${encodeURIComponent(
        'component:default/../../../etc/passwd',
      )}`,
      `/deployments?entityRef=${encodeURIComponent('\u0000')}`,
      `/deployments?entityRef=${'a'.repeat(5000)}`,
      '/deployments?entityRef=a&entityRef=b',
      '/deployments?entityRef[a]=b',
      '/deployments?cluster=good-1&cluster=good-2',
      `/deployments?cluster=${encodeURIComponent("good-1' OR '1'='1")}`,
      '/applications?entityRef[$ne]=x',
      '/clusters?status=OFFLINE%27%3B%20DROP%20TABLE%20fleet_clusters%3B--',
      '/events?limit=99999999999999999999',
      '/events?limit=-1',
      '/clusters/good-1/events?limit=NaN',
    ]) {
      corpus.push(['GET', p]);
    }
    for (const entityRef of [
      "component:default/x'); DROP TABLE fleet_deployments;--",
      'user:default/guest',
      'component:other/' + 'n'.repeat(63),
      'component:default/' + 'n'.repeat(64),
      'x'.repeat(255),
      'x'.repeat(256),
    ]) {
      corpus.push(['POST', '/deployments', { entityRef, cluster: 'good-1' }]);
      corpus.push([
        'POST',
        '/applications',
        { entityRef, spec: { image: 'nginx:1.27' } },
      ]);
    }
    corpus.push([
      'POST',
      '/deployments',
      {
        entityRef: 'component:default/precious-1',
        cluster: 'good-1',
        replicas: 1e9,
      },
    ]);
    corpus.push([
      'POST',
      '/deployments',
      {
        entityRef: 'component:default/precious-1',
        cluster: 'good-1',
        image: 'a b',
      },
    ]);
    corpus.push([
      'POST',
      '/deployments',
      {
        entityRef: 'component:default/precious-1',
        cluster: 'good-1',
        image: 'i'.repeat(100_000),
      },
    ]);
    corpus.push([
      'GET',
      '/clusters',
      undefined,
      { headers: { Authorization: '' } },
    ]);
    corpus.push([
      'GET',
      '/clusters',
      undefined,
      { headers: { Authorization: `Bearer ${'x'.repeat(8000)}` } },
    ]);
    corpus.push([
      'POST',
      '/health/run',
      undefined,
      { headers: { Authorization: 'Basic cm9vdDpyb290' } },
    ]);
    corpus.push([
      'POST',
      '/clusters',
      '{"name":"charset"}',
      {
        raw: true,
        headers: { 'Content-Type': 'application/json; charset=utf-16' },
      },
    ]);

    const statuses = new Map<number, number>();
    const failures: string[] = [];
    for (const [method, route, body, options] of corpus) {
      try {
        const answer = await call(method, route, body, options);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status >= 500)
          failures.push(
            `${method} ${short(route, 80)} → ${answer.status} ${short(
              answer.text,
              200,
            )}`,
          );
      } catch (error) {
        failures.push(
          `${method} ${short(route, 80)} → ${(error as Error).message}`,
        );
      }
    }
    // Paging: a bad limit or a cursor the list did not give is a 400 naming the parameter.
    const forge = (value: unknown) =>
      Buffer.from(JSON.stringify(value)).toString('base64url');
    const realCursor = (await call('GET', '/clusters?limit=1')).json
      ?.nextCursor;
    const pagingCases: Array<[string, 'limit' | 'cursor']> = [];
    for (const list of ['/clusters', '/applications', '/deployments']) {
      for (const limit of [
        '0',
        '-1',
        '1001',
        'abc',
        '1e3',
        '0x10',
        '1.5',
        '',
        '%20%205',
        '99999999999999999999',
        'NaN',
      ]) {
        pagingCases.push([`${list}?limit=${limit}`, 'limit']);
      }
      pagingCases.push([`${list}?limit=1&limit=2`, 'limit']);
      pagingCases.push([`${list}?limit[$gt]=0`, 'limit']);
      for (const cursor of [
        'abc',
        '',
        '%00',
        'A'.repeat(10_000),
        forge({ l: list.slice(1), k: [] }),
        forge({ l: list.slice(1), k: [1, 2] }),
        forge({ l: list.slice(1), k: ['x'.repeat(600), 'y'] }),
        forge({ l: list.slice(1), k: ['a', 'b', 'c'], admin: true }),
        forge({ l: 'events', k: ['a'] }),
        forge("' OR 1=1 --"),
        Buffer.from('{"l":').toString('base64url'),
      ]) {
        pagingCases.push([
          `${list}?cursor=${encodeURIComponent(cursor)}`,
          'cursor',
        ]);
      }
    }
    // One list's cursor is not another's.
    pagingCases.push([`/deployments?cursor=${realCursor}`, 'cursor']);
    pagingCases.push([`/applications?cursor=${realCursor}`, 'cursor']);
    for (const [target, parameter] of pagingCases) {
      const answer = await call('GET', target);
      const message: string = answer.json?.error?.message ?? '';
      if (
        answer.status !== 400 ||
        !message.startsWith(`Invalid query: ${parameter}: `)
      )
        failures.push(
          `GET ${short(target, 80)} → ${answer.status} ${short(
            message,
            80,
          )}, expected 400 naming ${parameter}`,
        );
    }
    // A cursor made by hand (the right list, a key carrying SQL) is not one Fleet signed: a 400,
    // and the key never reaches a query.
    const injected = await call(
      'GET',
      `/deployments?cursor=${forge({
        l: 'deployments',
        k: ["'; DROP TABLE fleet_deployments; --", 'good-1'],
      })}`,
    );
    if (
      injected.status !== 400 ||
      !String(injected.json?.error?.message ?? '').includes('cursor')
    )
      failures.push(
        `GET /deployments with an injected cursor key → ${injected.status}, expected 400 naming the cursor`,
      );
    log(`paging corpus: ${pagingCases.length + 1} requests`);

    // Catalog injection: an endpoint carrying Markdown, HTML, whitespace or credentials would
    // reach the cluster entity's description; it is a 400, never stored.
    for (const endpoint of [
      'https://a.example/ [Reset your password](https://evil.example)',
      'https://a.example/\n# Urgent',
      'https://a.example/<img src=x onerror=alert(1)>',
      'https://admin:hunter2@a.example:6443',
      'https://a.example/`code`',
    ]) {
      const answer = await call('POST', '/clusters', {
        name: 'injected',
        endpoint,
        kubeconfigRef: 'secret:x',
      });
      if (answer.status !== 400)
        failures.push(
          `POST /clusters with endpoint ${JSON.stringify(endpoint)} → ${
            answer.status
          }, expected 400`,
        );
    }
    log(
      `HTTP corpus: ${corpus.length} requests, statuses ${JSON.stringify(
        Object.fromEntries(statuses),
      )}`,
    );
    for (const failure of failures) log(`  not held: ${failure}`);
    checks.ok(
      failures.length === 0,
      `${
        corpus.length
      } hostile requests: no 5xx, no dropped connection (statuses ${JSON.stringify(
        Object.fromEntries(statuses),
      )})`,
      failures,
    );

    // More kubeconfigs arrive while it runs, among them context names a database column cannot
    // hold as they are (300 characters; a NUL character): the next cycles must skip or store
    // them, and still discover the files after them.
    const ca = Buffer.from(sim.caPem).toString('base64');
    const late = (name: string, context: string, cluster: string) =>
      writeFileSync(
        path.join(dir, name),
        kubeconfig([
          {
            name: context,
            server: sim.endpoint(cluster),
            token: sim.token(cluster),
            ca,
          },
        ]),
      );
    writeFileSync(path.join(dir, 'late-malformed.yaml'), '{{{{');
    late('late-odd.yaml', '🚀 late', 'late');
    late('long-context.yaml', 'l'.repeat(300), 'late');
    late('nul-context.yaml', 'nul\u0000byte', 'late');
    late('zz-after.yaml', 'zz-after', 'zz-after');
    const later = await call('POST', '/health/run');
    const final = await call('POST', '/health/run');
    checks.ok(
      later.status === 200 && final.status === 200,
      'the next health cycles, discovering kubeconfigs added meanwhile (300-character and NUL context names among them), answer 200',
      [later.status, final.status],
    );
    const zz = await call('GET', '/clusters/zz-after');
    const discoveryFailure = readFileSync(logFile, 'utf8')
      .split('\n')
      .find(line => /discovery failed/i.test(line));
    checks.ok(
      zz.status === 200 && zz.json?.status === 'ONLINE',
      'a good kubeconfig added beside them (after them in file order) is discovered and ONLINE',
      `${zz.status}; backend log: ${short(
        pgMessage(discoveryFailure ?? '(nothing)'),
        200,
      )}`,
    );

    // A cluster is its API server (server URL and CA), never its name.
    const reuse = await call('POST', '/clusters', {
      name: 'good-1-again',
      endpoint: sim.endpoint('good-1'),
      kubeconfigRef: path.join(dir, 'good-1.yaml'),
      labels: { env: 'staging' },
    });
    const reuseSpelled = await call('POST', '/clusters', {
      name: 'good-1-again',
      endpoint: `${sim.endpoint('good-1')}/`,
      kubeconfigRef: 'secret:good-1',
    });
    const reuseStored = await call('GET', '/clusters/good-1-again');
    checks.ok(
      reuse.status === 409 &&
        /cluster 'good-1'/.test(reuse.json?.error?.message ?? '') &&
        reuseSpelled.status === 409 &&
        reuseStored.status === 404,
      "a manual registration of a discovered cluster's API server under a new name and labels is a 409 naming it (its URL spelled otherwise too), nothing stored",
      `${reuse.status} ${short(reuse.json?.error?.message, 120)}; ${
        reuseSpelled.status
      }; stored: ${reuseStored.status}`,
    );
    // A namesake context on another API server, in a file that sorts before good-2's; and one
    // while a known cluster's kubeconfig is unreadable for a cycle.
    const namesake = (file: string, context: string, cluster: string) =>
      writeFileSync(
        path.join(dir, file),
        kubeconfig([
          {
            name: context,
            server: sim.endpoint(cluster),
            token: sim.token(cluster),
            ca,
          },
        ]),
      );
    namesake('aa-namesake.yaml', 'good-2', 'impostor');
    namesake('named-prod.yaml', 'named-prod', 'named-prod');
    await call('POST', '/health/run');
    const namedProdConfig = readFileSync(path.join(dir, 'named-prod.yaml'));
    writeFileSync(
      path.join(dir, 'named-prod.yaml'),
      'apiVersion: v1\nclusters: [',
    );
    namesake('ab-named-prod.yaml', 'named-prod', 'impostor-2');
    await call('POST', '/health/run');
    const namedProdDuring = (await call('GET', '/clusters/named-prod')).json;
    writeFileSync(path.join(dir, 'named-prod.yaml'), namedProdConfig);
    await call('POST', '/health/run');
    // Every cluster, all pages: the corpus holds more than one page of them.
    const identities = (await listAll('/clusters')) as any[];
    const byEndpoint = (cluster: string) =>
      identities.filter(c => c.endpoint === sim.endpoint(cluster));
    const namedProd = identities.find(c => c.name === 'named-prod');
    checks.ok(
      byEndpoint('good-2')
        .map(c => c.name)
        .join() === 'good-2' &&
        /^good-2-[0-9a-f]{8}$/.test(byEndpoint('impostor')[0]?.name ?? '') &&
        namedProdDuring?.endpoint === sim.endpoint('named-prod') &&
        namedProd?.endpoint === sim.endpoint('named-prod') &&
        namedProd?.kubeconfigRef === path.join(dir, 'named-prod.yaml') &&
        /^named-prod-[0-9a-f]{8}$/.test(
          byEndpoint('impostor-2')[0]?.name ?? '',
        ),
      'a namesake context on another API server never re-points a cluster (in a file that sorts earlier, or while the known kubeconfig is unreadable): it becomes a new cluster with a new name',
      identities
        .filter(c =>
          ['good-2', 'impostor', 'named-prod', 'impostor-2'].some(
            n => c.endpoint === sim.endpoint(n),
          ),
        )
        .map(c => `${c.name} → ${short(c.endpoint, 60)}`),
    );

    const execRegistered = await call('POST', '/clusters', {
      name: 'exec-manual',
      endpoint: sim.endpoint('exec'),
      kubeconfigRef: path.join(execDir, 'exec.yaml'),
    });
    await call('POST', '/health/run');
    await call('POST', '/health/run');
    const execCluster = await call('GET', '/clusters/exec-manual');
    checks.ok(
      execRegistered.status === 201 &&
        execCluster.json?.status === 'UNKNOWN' &&
        !existsSync(execMarker),
      'a manual cluster whose kubeconfig runs an exec credential plugin stays UNKNOWN and the plugin never runs',
      `${execRegistered.status} ${execCluster.json?.status}: ${short(
        execCluster.json?.statusReason,
        120,
      )}; plugin ran: ${existsSync(execMarker)}`,
    );

    const registered = await listAll('/clusters');
    const trav = registered.filter(c => c.name.startsWith('trav-'));
    checks.ok(
      trav.length > 0 &&
        trav.every(
          c =>
            c.status === 'UNKNOWN' &&
            /NOT_PROBEABLE/.test(c.statusReason ?? ''),
        ),
      `the ${trav.length} clusters registered with traversal references stay UNKNOWN / NOT_PROBEABLE (never opened, never OFFLINE)`,
      trav.map(c => `${c.name}:${c.status}:${short(c.statusReason, 60)}`),
    );
    const goodAfter = registered.filter(c =>
      ['good-1', 'good-2', 'good-3'].includes(c.name),
    );
    checks.ok(
      goodAfter.length === 3 && goodAfter.every(c => c.status === 'ONLINE'),
      'good-1..3 still ONLINE',
    );
    const afterSnapshot = await snapshot();
    checks.equal(
      afterSnapshot,
      before,
      'nothing lost: the seeded applications, deployments and good clusters are exactly as before',
    );
    const eventsAfter = Number(
      (await knex('fleet_events').count({ n: '*' }).first())?.n,
    );
    checks.ok(
      eventsAfter >= eventsBefore,
      `the event history only grew (${eventsBefore} → ${eventsAfter})`,
    );
    const health = await call('GET', '/health');
    checks.ok(
      health.status === 200 && !fleet.backend.exited(),
      'the backend process is alive and answers GET /health',
    );

    const fromSecrets = await hostileSecrets({ sim, call, tmp, log });
    for (const [held, what, detail] of fromSecrets.checks)
      checks.ok(held, what, detail);

    // The manual cap: registrations racing for the last places get exactly those places.
    const manualNow = (await listAll('/clusters')).filter(
      c => c.source === 'manual',
    ).length;
    const room = MAX_MANUAL - manualNow;
    const racing = await Promise.all(
      Array.from({ length: Math.max(room, 0) + 10 }, (_, i) =>
        call('POST', '/clusters', {
          name: `capped-${i}`,
          // Each its own API server: the cap, not the identity check, is what refuses here.
          endpoint: `https://capped-${i}.example:6443`,
          kubeconfigRef: `secret:capped-${i}`,
        }),
      ),
    );
    const manualAfter = (await listAll('/clusters')).filter(
      c => c.source === 'manual',
    ).length;
    const refusedCap = racing.filter(a => a.status === 409);
    checks.ok(
      room >= 0 &&
        racing.filter(a => a.status === 201).length === room &&
        refusedCap.length === 10 &&
        refusedCap.every(a =>
          /fleet\.clusters\.maxManual/.test(a.json?.error?.message ?? ''),
        ) &&
        manualAfter === MAX_MANUAL,
      `fleet.clusters.maxManual=${MAX_MANUAL} holds: ${
        room + 10
      } racing registrations for the last ${room} places, ${room} registered, the others 409 naming the setting`,
      `${manualNow} manual before, ${manualAfter} after; statuses ${racing
        .map(a => a.status)
        .join(',')}`,
    );

    // A caller who is not a cluster admin (a token allowed only to deploy) reads everything and
    // never learns where a kubeconfig is or which system error reading it gave.
    const guest = fleet.guestAuthorization;
    const everything = await listAll('/clusters');
    const refPaths = [
      ...new Set(
        everything
          .map(c => c.kubeconfigRef as string)
          .filter(ref => ref && /[/\\]/.test(ref)),
      ),
    ];
    const guestRead = async (target: string) =>
      call('GET', target, undefined, { headers: { Authorization: guest } });
    const guestTexts: string[] = [];
    // A cluster's context is a name in its kubeconfig, shown to all (the corpus' own odd context
    // names include '../../etc/passwd'): every other field is checked.
    const withoutContext = (cluster: any) => ({
      ...cluster,
      context: undefined,
    });
    const guestClusters = await listAll('/clusters', guest);
    guestTexts.push(JSON.stringify(guestClusters.map(withoutContext)));
    // Of deployments and the fleet's events, the texts a cluster's state reaches (their entity
    // refs are the corpus' own, traversal-looking names included).
    guestTexts.push(
      JSON.stringify(
        (await listAll('/deployments', guest)).map(d => [
          d.statusReason,
          d.message,
        ]),
      ),
    );
    guestTexts.push(
      JSON.stringify(
        ((await guestRead('/events?limit=500')).json?.items ?? [])
          .filter((e: any) => e.subjectKind === 'cluster')
          .map((e: any) => [e.reason, e.message]),
      ),
    );
    for (const c of everything.filter(
      x => x.status !== 'ONLINE' || x.source === 'manual',
    )) {
      const name = encodeURIComponent(c.name);
      guestTexts.push(
        JSON.stringify(
          withoutContext((await guestRead(`/clusters/${name}`)).json),
        ),
      );
      guestTexts.push((await guestRead(`/clusters/${name}/events`)).text);
    }
    const hostDetail = (text: string) =>
      refPaths.find(p => text.includes(p)) ??
      text.match(/\bE(NOENT|ACCES|PERM|ISDIR|NOTDIR|LOOP|MFILE)\b/)?.[0] ??
      (text.includes(dir) ? dir : undefined) ??
      (text.includes('/etc/passwd') ? '/etc/passwd' : undefined);
    const guestLeaks = guestTexts
      .map(hostDetail)
      .filter((x): x is string => !!x);
    const adminText = JSON.stringify(everything);
    checks.ok(
      refPaths.length > 0 &&
        hostDetail(adminText) !== undefined &&
        guestClusters.length === everything.length &&
        guestClusters.every(c => c.kubeconfigRef === null) &&
        guestLeaks.length === 0,
      `a caller who is not a cluster admin sees ${guestClusters.length} clusters with no kubeconfigRef, and no kubeconfig path or system error code in ${guestTexts.length} answers (a cluster admin sees ${refPaths.length} paths)`,
      guestLeaks.slice(0, 5),
    );

    // No answer carries kubeconfig contents, tokens, certificates or /etc/passwd.
    const secrets = [
      ...fromSecrets.contents,
      ...['good-1', 'good-2', 'good-3'].map(n => sim.token(n)),
      Buffer.from(sim.caPem).toString('base64').slice(0, 40),
      'BEGIN CERTIFICATE',
      'root:x:0:0',
      'x-padding',
    ];
    const leaks = answers
      .filter(a => secrets.some(s => a.text.includes(s)))
      .map(a => `${a.method} ${short(a.path, 60)}`);
    checks.ok(
      leaks.length === 0,
      `no secret, certificate or file content in any of the ${answers.length} answers`,
      leaks,
    );
    await fleet.backend.stop();
    const logText = readFileSync(logFile, 'utf8');
    checks.ok(
      !/Unhandled|uncaught/i.test(logText),
      'no unhandled error in the backend log',
    );
    const loggedSecrets = fromSecrets.contents.filter(c => logText.includes(c));
    checks.ok(
      loggedSecrets.length === 0,
      `no content of a kubeconfig Secret in the backend log (${fromSecrets.contents.length} tokens, markers and encodings looked for)`,
      loggedSecrets.map(c => short(c, 12)),
    );

    // A restart with the whole corpus in the directory (discovery runs during plugin startup).
    try {
      const again = await startFleetBackend({
        db,
        kubeconfigDir: dir,
        fleet: { health: { probeTimeout: { seconds: 1 } } },
        logFile,
      });
      const cycle = await again.call('POST', '/health/run');
      checks.ok(
        cycle.status === 200,
        'the backend restarts with the whole corpus in its directory and runs a cycle',
        cycle.status,
      );
      await again.backend.stop();
    } catch (error) {
      const cause = readFileSync(logFile, 'utf8').match(
        /startup failed; caused by error: ([^\n]*)/,
      )?.[1];
      checks.ok(
        false,
        'the backend restarts with the whole corpus in its directory',
        `plugin 'fleet' startup failed: ${short(
          pgMessage(cause ?? (error as Error).message),
          200,
        )}`,
      );
    }

    // Tenant crossing: a deployer of one project against another's namespaces, Secrets, hosts,
    // clusters and objects (its own simulator, database and backend, with projects and a catalog).
    await tenantCrossing({ checks, log, tmp });
  },
};
