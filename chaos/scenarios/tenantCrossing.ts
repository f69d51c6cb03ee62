/*
 * The hostile-input corpus' tenant-crossing section: a deployer of one project (payments) tries
 * to reach another project's (finance) namespaces, Secrets, Ingress hosts, clusters and objects
 * through Fleet, which acts with its own credentials on clusters both teams share. Every attempt
 * is refused, nothing is written (Fleet's tables, the clusters' objects), and no answer is a 500.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import {
  createTempDatabase,
  snapshotFleetTables,
  startSimulator,
} from '@cnp/fleet-harness';
import {
  CHAOS_READY_DELAY_MS,
  type Checks,
  short,
  startFleetBackend,
  tempDir,
  waitFor,
} from '../lib';
import { kubeRequest } from '../lib/kubeRequest';

const PAYMENTS = 'component:default/payments';
const LEDGER = 'component:default/ledger';
const STRAY = 'component:default/stray';

const entities = [
  ...['payments', 'finance', 'nobody'].map(name => ({
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Group',
    metadata: { name },
    spec: { type: 'team', children: [] },
  })),
  ...[
    ['payments', 'payments'],
    ['ledger', 'finance'],
    ['stray', 'nobody'],
  ].map(([name, owner]) => ({
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: { name, annotations: { 'cnp.io/image': `${name}:1` } },
    spec: { type: 'service', lifecycle: 'production', owner },
  })),
];

const projects = [
  {
    name: 'payments',
    owners: ['group:default/payments'],
    clusters: { names: ['shop-1'] },
    namespaces: ['payments', 'payments-*'],
    secrets: ['payments-*'],
    ingressHosts: ['*.payments.example.com'],
  },
  {
    name: 'finance',
    owners: ['group:default/finance'],
    clusters: { names: ['vault'] },
    namespaces: ['finance'],
    secrets: ['ledger-*'],
    ingressHosts: ['*.finance.example.com'],
  },
];

const secretRef = (name: string) => ({
  valueFrom: { secretKeyRef: { name, key: 'password' } },
});

/** Runs the section with its own simulator, database and backend; records its checks. */
export async function tenantCrossing(options: {
  checks: Checks;
  log: (line: string) => void;
  tmp: string;
}): Promise<void> {
  const { checks, log, tmp } = options;
  const sim = await startSimulator({
    readyDelayMs: CHAOS_READY_DELAY_MS,
    clusters: ['shop-1', 'vault'],
    outDir: tempDir('fleet-chaos-tenants-'),
  });
  const db = await createTempDatabase('fleet_chaos_tenants');
  const catalogFile = path.join(tmp, 'tenant-entities.yaml');
  writeFileSync(catalogFile, entities.map(e => stringify(e)).join('---\n'));
  const fleet = await startFleetBackend({
    db,
    kubeconfigDir: sim.kubeconfigDir,
    fleet: {
      health: { probeTimeout: { seconds: 2 } },
      deploy: { pollInterval: { milliseconds: 200 } },
      // One reconcile run at startup, none during the attempts (they compare every row).
      reconcile: { interval: { hours: 1 }, watch: false },
      projects,
    },
    logFile: path.join(tmp, 'tenants-backend.log'),
    catalogFile,
  });
  try {
    await run(fleet, db, sim, checks, log);
  } finally {
    await fleet.backend.stop();
    await db.drop();
  }
}

async function run(
  fleet: Awaited<ReturnType<typeof startFleetBackend>>,
  db: Awaited<ReturnType<typeof createTempDatabase>>,
  sim: Awaited<ReturnType<typeof startSimulator>>,
  checks: Checks,
  log: (line: string) => void,
) {
  const { call, answers } = fleet;
  const first = answers.length;
  const deployer = { headers: { Authorization: fleet.guestAuthorization } };
  const as = (method: string, target: string, body?: unknown) =>
    call(method, target, body, deployer);
  await call('POST', '/health/run');
  // The catalog has read the components (its first processing takes a few seconds).
  await waitFor(
    'the catalog',
    async () => {
      const found = await Promise.all(
        ['payments', 'ledger', 'stray'].map(async name => {
          const res = await fetch(
            `${fleet.backend.base.replace(
              /\/api\/fleet$/,
              '',
            )}/api/catalog/entities/by-name/component/default/${name}`,
            { headers: { Authorization: `Bearer ${fleet.token}` } },
          );
          return res.ok;
        }),
      );
      return found.every(Boolean) ? true : undefined;
    },
    60_000,
  );

  // Finance's own state, set up by its team: ledger in namespace finance on vault, reading its
  // Secret, behind its host; and a Deployment of another tool, `payments`, in a namespace the
  // payments project's pattern matches.
  const ledger = await call('POST', '/applications', {
    entityRef: LEDGER,
    spec: {
      image: 'ledger:1',
      replicas: 1,
      namespace: 'finance',
      env: { DB_PASSWORD: secretRef('ledger-db') },
      ingress: {
        host: 'books.finance.example.com',
        tls: { secretName: 'ledger-tls' },
      },
    },
  });
  const ledgerDeploy = await call('POST', '/deployments', {
    entityRef: LEDGER,
    cluster: 'vault',
  });
  const ledgerId = ledger.json?.id;
  checks.ok(
    ledger.status === 201 && ledgerDeploy.status === 201,
    'finance registers and deploys ledger within its project (namespace finance on vault, its Secret and host)',
    [ledger.status, ledger.json?.error?.message, ledgerDeploy.status],
  );
  await kubeRequest(sim, 'shop-1', 'POST', '/api/v1/namespaces', {
    metadata: { name: 'payments-legacy' },
  });
  await kubeRequest(
    sim,
    'shop-1',
    'POST',
    '/apis/apps/v1/namespaces/payments-legacy/deployments',
    {
      metadata: {
        name: 'payments',
        labels: { app: 'payments', 'app.kubernetes.io/managed-by': 'helm' },
      },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'payments' } },
        template: {
          metadata: { labels: { app: 'payments' } },
          spec: { containers: [{ name: 'app', image: 'legacy:9' }] },
        },
      },
    },
  );
  const payments = await as('POST', '/applications', {
    entityRef: PAYMENTS,
    spec: { image: 'payments:1', replicas: 1, namespace: 'payments' },
  });
  checks.ok(
    payments.status === 201,
    'the deployer registers payments within its own project',
    [payments.status, payments.json?.error?.message],
  );
  const paymentsId = payments.json?.id;
  const paymentsDeploy = await as('POST', '/deployments', {
    entityRef: PAYMENTS,
    cluster: 'shop-1',
  });
  // Both teams' deployments settle before the attempts: each attempt compares every row and
  // object before and after, so nothing else may be writing.
  const settled = async (id: string | undefined) =>
    id
      ? waitFor(
          `deployment ${id} DEPLOYED`,
          async () =>
            (await call('GET', `/deployments/${id}`)).json?.status ===
            'DEPLOYED'
              ? true
              : undefined,
          30_000,
        ).catch(() => false)
      : false;
  checks.ok(
    (await settled(ledgerDeploy.json?.id)) &&
      (await settled(paymentsDeploy.json?.id)),
    "both teams' deployments are DEPLOYED before the attempts",
  );

  const knex = db.knex();
  const clusterObjects = () =>
    JSON.stringify([sim.objects('shop-1'), sim.objects('vault')]);
  type Attempt = {
    what: string;
    method: string;
    target: string;
    body?: unknown;
    status?: number;
    says: string;
  };
  const attempts: Attempt[] = [
    {
      what: "finance's namespace",
      method: 'POST',
      target: '/applications',
      body: {
        entityRef: 'component:default/stray-two',
        spec: { image: 'x:1' },
      },
      says: 'belongs to no Fleet project',
    },
    ...[
      ['finance', "namespace 'finance' is not in project payments"],
      ['kube-system', "namespace 'kube-system' is a system namespace"],
      ['argocd', "namespace 'argocd' is not in project payments"],
    ].map(([namespace, says]) => ({
      what: `PATCH payments into namespace ${namespace}`,
      method: 'PATCH',
      target: `/applications/${paymentsId}`,
      body: { spec: { namespace } },
      says,
    })),
    {
      what: "an env reference to finance's Secret",
      method: 'PATCH',
      target: `/applications/${paymentsId}`,
      body: { spec: { env: { DB: secretRef('ledger-db') } } },
      says: "Secret of DB: 'ledger-db' is not in project payments",
    },
    {
      what: "an env reference to ArgoCD's admin Secret",
      method: 'PATCH',
      target: `/applications/${paymentsId}`,
      body: {
        spec: { env: { P: secretRef('argocd-initial-admin-secret') } },
      },
      says: "'argocd-initial-admin-secret' is not in project payments",
    },
    {
      what: "a ConfigMap reference to finance's config",
      method: 'PATCH',
      target: `/applications/${paymentsId}`,
      body: {
        spec: {
          env: {
            C: {
              valueFrom: {
                configMapKeyRef: { name: 'ledger-config', key: 'k' },
              },
            },
          },
        },
      },
      says: "ConfigMap of C: 'ledger-config' is not in project payments",
    },
    {
      what: "finance's Ingress host",
      method: 'PATCH',
      target: `/applications/${paymentsId}`,
      body: { spec: { ingress: { host: 'books.finance.example.com' } } },
      says: "Ingress host 'books.finance.example.com' is not in project payments",
    },
    {
      what: 'a wildcard Ingress host',
      method: 'PATCH',
      target: `/applications/${paymentsId}`,
      body: { spec: { ingress: { host: '*.example.com' } } },
      says: 'is a wildcard',
    },
    {
      what: "finance's TLS Secret on the deployer's own host",
      method: 'PATCH',
      target: `/applications/${paymentsId}`,
      body: {
        spec: {
          ingress: {
            host: 'shop.payments.example.com',
            tls: { secretName: 'ledger-tls' },
          },
        },
      },
      says: "TLS Secret 'ledger-tls' is not in project payments",
    },
    {
      what: "a placement on finance's cluster",
      method: 'PATCH',
      target: `/applications/${paymentsId}`,
      body: { placement: { clusters: ['shop-1', 'vault'] } },
      says: "cluster 'vault' is not in project payments",
    },
    {
      what: "a placement override reading finance's Secret",
      method: 'PATCH',
      target: `/applications/${paymentsId}`,
      body: {
        placement: {
          clusters: ['shop-1'],
          overrides: [
            { clusters: ['shop-1'], env: { X: secretRef('ledger-db') } },
          ],
        },
      },
      says: "'ledger-db' is not in project payments",
    },
    {
      what: "a deploy to finance's cluster",
      method: 'POST',
      target: '/deployments',
      body: { entityRef: PAYMENTS, cluster: 'vault' },
      says: "cluster 'vault' is not in project payments",
    },
    {
      what: "a release to finance's cluster",
      method: 'POST',
      target: `/applications/${paymentsId}/releases`,
      body: { image: 'payments:2', clusters: ['vault'] },
      says: "cluster 'vault' is not in project payments",
    },
    {
      what: "a release reading finance's Secret",
      method: 'POST',
      target: `/applications/${paymentsId}/releases`,
      body: { image: 'payments:2', env: { DB: secretRef('ledger-db') } },
      says: "'ledger-db' is not in project payments",
    },
    {
      what: "a release to its own and finance's cluster at once",
      method: 'POST',
      target: `/applications/${paymentsId}/releases`,
      body: { image: 'payments:2', clusters: ['shop-1', 'vault'] },
      says: "cluster 'vault' is not in project payments",
    },
    {
      what: "finance's component deployed onto the deployer's cluster",
      method: 'POST',
      target: '/deployments',
      body: { entityRef: LEDGER, cluster: 'shop-1' },
      says: "cluster 'shop-1' is not in project finance",
    },
    {
      what: "finance's component moved into the deployer's namespace",
      method: 'PATCH',
      target: `/applications/${ledgerId}`,
      body: { spec: { namespace: 'payments' } },
      says: "namespace 'payments' is not in project finance",
    },
    {
      what: 'a component of no project registered',
      method: 'POST',
      target: '/applications',
      body: { entityRef: STRAY, spec: { image: 'stray:1' } },
      says: 'component:default/stray belongs to no Fleet project',
    },
    {
      what: 'a component of no project deployed',
      method: 'POST',
      target: '/deployments',
      body: { entityRef: STRAY, cluster: 'shop-1' },
      says: 'belongs to no Fleet project',
    },
    {
      what: 'a component of no project in finance',
      method: 'POST',
      target: '/applications',
      body: {
        entityRef: STRAY,
        spec: { image: 'stray:1', namespace: 'finance' },
      },
      says: 'belongs to no Fleet project',
    },
    {
      what: "a registration naming finance's namespace",
      method: 'POST',
      target: '/applications',
      body: {
        entityRef: PAYMENTS,
        spec: { image: 'payments:1', namespace: 'finance' },
      },
      says: "namespace 'finance' is not in project payments",
    },
  ];
  // Attempt 0 is a component the catalog does not hold: no project either.
  attempts[0].what = 'a component the catalog does not hold';
  const refusals: string[] = [];
  for (const attempt of attempts) {
    const tables = await snapshotFleetTables(knex);
    const objects = clusterObjects();
    const answer = await as(attempt.method, attempt.target, attempt.body);
    const message: string = answer.json?.error?.message ?? '';
    const expected = attempt.status ?? 403;
    const held =
      answer.status === expected &&
      message.includes(attempt.says) &&
      (await snapshotFleetTables(knex)) === tables &&
      clusterObjects() === objects;
    if (!held) {
      refusals.push(`${attempt.what}: ${answer.status} ${short(message, 120)}`);
    }
  }
  checks.ok(
    refusals.length === 0,
    `${attempts.length} tenant-crossing requests by a deployer of project payments (finance's namespace, system and foreign namespaces, Secrets, ConfigMaps, Ingress hosts and TLS, clusters, releases, components of no project) are refused with a 403 naming the project and the rule, and change no row and no object`,
    refusals,
  );

  // Objects: the deployer's component in a namespace its pattern allows, where another tool's
  // Deployment of the same name runs. Fleet's deploy fails naming it; the object is untouched,
  // and so it stays through an undeploy.
  /** The other tool's Deployment as the cluster holds it, every field. */
  const foreignDeployment = () =>
    JSON.stringify(
      sim
        .objects('shop-1')
        .find(
          o =>
            o.kind === 'Deployment' &&
            o.metadata.namespace === 'payments-legacy' &&
            o.metadata.name === 'payments',
        ),
    );
  const foreignBefore = foreignDeployment();
  // payments moves there (forgotten first: a namespace change needs no deployments).
  const existing = await call(
    'GET',
    `/deployments?entityRef=${encodeURIComponent(PAYMENTS)}`,
  );
  for (const d of existing.json?.items ?? []) {
    await call('DELETE', `/deployments/${d.id}?force=true`);
  }
  const patched = await as('PATCH', `/applications/${paymentsId}`, {
    spec: { namespace: 'payments-legacy' },
  });
  const deployed = await as('POST', '/deployments', {
    entityRef: PAYMENTS,
    cluster: 'shop-1',
  });
  const ended = deployed.json?.id
    ? await waitFor(
        'the deploy onto the foreign Deployment to end',
        async () => {
          const d = await call('GET', `/deployments/${deployed.json.id}`);
          return d.json?.status === 'FAILED' || d.json?.status === 'DEPLOYED'
            ? d.json
            : undefined;
        },
        30_000,
      ).catch(() => undefined)
    : undefined;
  checks.ok(
    patched.status === 200 &&
      ended?.status === 'FAILED' &&
      foreignDeployment() === foreignBefore,
    "a deploy onto another tool's Deployment of the same name (in a namespace the project's pattern allows) ends FAILED, and the Deployment comes out byte-identical",
    [patched.status, ended?.status, ended?.statusReason, ended?.message],
  );
  if (deployed.json?.id) {
    await as('DELETE', `/deployments/${deployed.json.id}`);
    await new Promise(r => setTimeout(r, 2_000));
  }
  checks.ok(
    foreignDeployment() === foreignBefore,
    "undeploying that deployment leaves the other tool's Deployment byte-identical",
  );

  // A namespace matched only by a pattern is never created by Fleet.
  const patchedNew = await as('PATCH', `/applications/${paymentsId}`, {
    spec: { namespace: 'payments-new' },
  });
  const intoNew = await as('POST', '/deployments', {
    entityRef: PAYMENTS,
    cluster: 'shop-1',
  });
  checks.ok(
    !sim
      .objects('shop-1')
      .some(o => o.kind === 'Namespace' && o.metadata.name === 'payments-new'),
    'Fleet does not create a namespace its project names only by a pattern (payments-*)',
    [patchedNew.status, intoNew.status, intoNew.json?.status],
  );

  const mine = answers.slice(first);
  const errors = mine.filter(a => a.status >= 500);
  checks.ok(
    errors.length === 0,
    `no answer of the tenant-crossing section is a 5xx (${mine.length} requests)`,
    errors.map(e => `${e.method} ${e.path}: ${e.status} ${short(e.text, 80)}`),
  );
  log(
    `tenant crossing: ${attempts.length} refusals tried, ${mine.length} requests in all`,
  );
}
