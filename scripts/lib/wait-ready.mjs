// Waits until the portal that scripts/start.sh started can be used, then prints its ready line and
// the places to open. Ready means: the backend answers, the frontend is served, the catalog holds
// the example org (the guest in its group), the example components and the Fleet template, and
// Fleet's first health cycle is done (every cluster has a status from a probe).
//   node scripts/lib/wait-ready.mjs <frontend URL> <backend URL> <token file> <pid to watch>
// Prints what it still waits for every 15 s; exits 1 when the watched process (yarn start) ends
// first, or after FLEET_READY_TIMEOUT seconds (default 600). FLEET_STARTED_MS (epoch ms): when
// start.sh began, for the time the ready line gives.
import fs from 'node:fs';

const [frontend, backend, tokenFile, pid] = process.argv.slice(2);
if (!frontend || !backend || !tokenFile) {
  console.error(
    'usage: wait-ready.mjs <frontend URL> <backend URL> <token file> [pid]',
  );
  process.exit(2);
}
const started = Date.now();
const timeoutMs = Number(process.env.FLEET_READY_TIMEOUT ?? 600) * 1000;
const token = fs.readFileSync(tokenFile, 'utf8').trim();
const headers = { authorization: `Bearer ${token}` };

const COMPONENTS = ['payments', 'checkout', 'inventory'];
const TEMPLATE = 'template:default/fleet-app';

async function ok(url, init) {
  try {
    const res = await fetch(url, {
      ...init,
      signal: AbortSignal.timeout(5000),
    });
    return res.ok ? res : undefined;
  } catch {
    return undefined;
  }
}

async function entity(ref) {
  const [kind, rest] = ref.split(':');
  const [namespace, name] = rest.split('/');
  const res = await ok(
    `${backend}/api/catalog/entities/by-name/${kind}/${namespace}/${name}`,
    { headers },
  );
  return res ? res.json() : undefined;
}

/** Each check: what it waits for, and whether it holds now. */
const checks = [
  [
    'the backend',
    async () => !!(await ok(`${backend}/.backstage/health/v1/readiness`)),
  ],
  ['the frontend', async () => !!(await ok(frontend))],
  [
    'the org in the catalog (user:default/guest in group:default/guests)',
    async () =>
      (await entity('user:default/guest'))?.relations?.some(
        r => r.type === 'memberOf' && r.targetRef === 'group:default/guests',
      ) ?? false,
  ],
  [
    `the components in the catalog (${COMPONENTS.join(', ')})`,
    async () =>
      (
        await Promise.all(
          COMPONENTS.map(name => entity(`component:default/${name}`)),
        )
      ).every(e => e?.relations?.some(r => r.type === 'ownedBy')),
  ],
  [
    `the template in the catalog (${TEMPLATE})`,
    async () => !!(await entity(TEMPLATE)),
  ],
  [
    "Fleet's first health cycle",
    async () => {
      const res = await ok(`${backend}/api/fleet/summary`, { headers });
      const summary = res && (await res.json());
      return !!summary?.lastCycleAt;
    },
  ],
];

const alive = () => {
  if (!pid) return true;
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch {
    return false;
  }
};

let lastReport = Date.now();
for (;;) {
  const pending = [];
  for (const [what, holds] of checks) {
    if (!(await holds())) pending.push(what);
  }
  if (pending.length === 0) break;
  if (!alive()) {
    console.error('fleet: the portal stopped before it was ready');
    process.exit(1);
  }
  if (Date.now() - started > timeoutMs) {
    console.error(
      `fleet: not ready after ${timeoutMs / 1000} s; waiting for ${pending.join(
        ', ',
      )}`,
    );
    process.exit(1);
  }
  if (Date.now() - lastReport >= 15_000) {
    lastReport = Date.now();
    console.log(`fleet: waiting for ${pending.join(', ')}`);
  }
  await new Promise(r => setTimeout(r, 1000));
}

const since = Number(process.env.FLEET_STARTED_MS) || started;
const seconds = Math.round((Date.now() - since) / 1000);
console.log(
  [
    `fleet: ready in ${seconds} s. Sign in as the guest, then open:`,
    `  a component's page  ${frontend}/catalog/default/component/payments`,
    `  the fleet page      ${frontend}/fleet`,
    `  the Fleet template  ${frontend}/create/templates/default/fleet-app`,
  ].join('\n'),
);
