// End-to-end test of Fleet in headless Chromium, against the portal started exactly as the
// README's run command starts it (scripts/start.sh: simulated fleet + backend + frontend).
//
// It opens a component page, sees a chip per cluster, deploys through the dialog and sees the
// deployment appear; changes its image behind Fleet's back and sees the drift reported; then
// takes that simulated cluster down, runs health cycles through the API,
// and — without reloading the page — sees the chip turn OFFLINE, the deployment DEGRADED and the
// cluster disabled in the picker. Screenshots of each step go to e2e-artifacts/ (git-ignored).
// After the deploy, the component's Kubernetes tab shows its pods on that cluster and a pod's logs.
// Then a progressive release through the Release dialog: a YAML strategy of three waves (sim-1,
// a Rollout cluster, alone first), a canary held at 20 % until promoted, analysis against the
// simulator's Prometheus; the second wave's cluster answers a failing success rate, the release
// aborts and every cluster it touched is back on the image it ran before. Then a canary judged
// against its baseline on sim-3 (e2e/judgedRelease.mjs): its judgment table, and its completion.
// The UI runs with polling off (fleet.frontend.pollInterval 0): every refresh after a page load is
// a Backstage signal that Fleet published when it committed the change; the chip turns OFFLINE
// after the health cycle that confirmed the outage (how soon is logged). The backend's Prometheus exporter
// (:9464) is read at that moment too.
//
// Before all that, the first minute of a newcomer: it signs in as the guest (through the API and
// in the browser) while the catalog has not read the org yet, waits for start.sh's ready line and
// opens the three places it prints, then deploys with those early sign-ins, without signing in
// again. It runs the Fleet template. Every screen is shot at 1280 px and 1920 px wide (and checked
// for names broken mid-word and a page wider than the window); the fleet page's events must name
// things, never show a bare id; the component card and the fleet page at 1280 px are copied to
// docs/images/ for the README.
// Last, governed promotion (e2e/governedPromotion.mjs): payments' staging and prod stages, a
// release to prod waiting for an approval its author may not give, and carol's approval.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { governedPromotion } from './governedPromotion.mjs';
import { brokenRollout } from './brokenRollout.mjs';
import { defaultStrategyRelease } from './defaultStrategyRelease.mjs';
import { judgedRelease } from './judgedRelease.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stateDir = path.join(root, '.fleet-e2e');
const artifacts = path.join(root, 'e2e-artifacts');
const SIM_PORT = Number(process.env.FLEET_SIM_PORT ?? 6550);
const PROMETHEUS_PORT = Number(process.env.FLEET_PROMETHEUS_PORT ?? 9091);
const BACKEND_PORT = Number(process.env.FLEET_BACKEND_PORT ?? 7007);
const FRONTEND_PORT = Number(process.env.FLEET_FRONTEND_PORT ?? 3000);
const BACKEND = `http://localhost:${BACKEND_PORT}`;
const FRONTEND = `http://localhost:${FRONTEND_PORT}`;
const METRICS_PORT = Number(process.env.OTEL_EXPORTER_PROMETHEUS_PORT ?? 9464);
const CLUSTER = 'sim-2';
/** The widths every screen is shot and checked at. */
const WIDTHS = [1280, 1920];
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const docsImages = path.join(root, 'docs', 'images');

const log = (...args) =>
  console.log(`[e2e ${new Date().toISOString().slice(11, 19)}]`, ...args);
const sleep = ms => new Promise(r => setTimeout(r, ms));

async function waitFor(what, fn, timeoutMs = 180_000, everyMs = 1000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await sleep(everyMs);
  }
  throw new Error(
    `Timed out waiting for ${what}${last ? `: ${last.message}` : ''}`,
  );
}

function simulatorFault(cluster, mode) {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: SIM_PORT,
        path: `/clusters/${cluster}/_sim/fault`,
        method: 'POST',
        rejectUnauthorized: false,
        headers: { 'content-type': 'application/json' },
      },
      res => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve()
            : reject(new Error(`fault: HTTP ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ mode }));
  });
}

function simulatorRequest(route, body) {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: SIM_PORT,
        path: route,
        method: body ? 'POST' : 'GET',
        rejectUnauthorized: false,
        headers: { 'content-type': 'application/json' },
      },
      res => {
        let text = '';
        res.on('data', chunk => (text += chunk));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(JSON.parse(text))
            : reject(new Error(`${route}: HTTP ${res.statusCode} ${text}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

/** What the simulator holds on one cluster. */
async function simulatorObjects(cluster) {
  return (await simulatorRequest(`/clusters/${cluster}/_sim/objects`)).items;
}

/** `kubectl set image` behind Fleet's back, through the simulator's drift injection. */
async function simulatorDrift(cluster, name, image) {
  const { items } = await simulatorRequest(`/clusters/${cluster}/_sim/objects`);
  const live = items.find(
    o => o.kind === 'Deployment' && o.metadata.name === name,
  );
  const containers = live.spec.template.spec.containers.map((c, i) =>
    i === 0 ? { ...c, image } : c,
  );
  await simulatorRequest(`/clusters/${cluster}/_sim/drift`, {
    kind: 'Deployment',
    namespace: live.metadata.namespace,
    name,
    patch: { spec: { template: { spec: { containers } } } },
  });
}

async function api(method, route, body) {
  const token = fs
    .readFileSync(path.join(stateDir, 'dev-token'), 'utf8')
    .trim();
  const res = await fetch(`${BACKEND}/api/fleet${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok)
    throw new Error(
      `${method} ${route}: HTTP ${res.status} ${await res.text()}`,
    );
  return res.json();
}

/**
 * Runs a health cycle now. One asked within fleet.health.manualMinInterval (10 s) of the last
 * cycle answers that cycle's summary marked `reused`: wait until a run may probe, and ask again.
 */
async function runHealthCycle() {
  for (;;) {
    const cycle = await api('POST', '/health/run');
    if (!cycle.reused) return cycle;
    await sleep(
      Math.max(0, Date.parse(cycle.reused.nextRunAt) - Date.now()) + 200,
    );
  }
}

let portal;
let browser;
let step = 0;
/** A screenshot once every open dialog has finished fading in (a user sees it whole). */
async function dialogShot(page, name) {
  await page.waitForFunction(() =>
    [...document.querySelectorAll('.MuiDialog-container')].every(
      el => getComputedStyle(el).opacity === '1',
    ),
  );
  await shot(page, name);
}

/**
 * What a screen must not do at any width: break a name or a code mid-word (a cluster name, a
 * reason code, a chip's label wrapping onto two lines), or be wider than the window.
 */
async function layoutProblems(page) {
  return page.evaluate(() => {
    const problems = [];
    const root = document.scrollingElement ?? document.documentElement;
    if (root.scrollWidth > window.innerWidth + 1) {
      problems.push(
        `the page is ${root.scrollWidth} px wide in a ${window.innerWidth} px window`,
      );
    }
    const whole = [
      ...document.querySelectorAll(
        'table code, [data-cluster] > span, .MuiChip-label',
      ),
    ];
    for (const el of whole) {
      const text = el.textContent.trim();
      // One word (no space) laid out on more than one line is a word broken mid-way.
      if (!text || /\s/.test(text)) continue;
      const lines = new Set(
        [...el.getClientRects()].map(r => Math.round(r.top)),
      );
      if (lines.size > 1)
        problems.push(`'${text}' is broken over ${lines.size} lines`);
    }
    // Text cut off at its box's edge (Backstage's theme keeps list texts on one line).
    for (const el of document.querySelectorAll(
      '[aria-label="Events"] .MuiListItemText-root',
    )) {
      if (el.scrollWidth > el.clientWidth + 1) {
        problems.push(`an event is cut off: '${el.textContent.slice(0, 60)}…'`);
      }
    }
    return problems;
  });
}

/**
 * What Fleet's own surfaces must not show a reader (hover titles excepted, as `innerText` leaves
 * them out): an id, an entity ref, a code or a machine timestamp where words, names and relative
 * times belong. The surfaces: the component's Fleet cards, the dialogs, the fleet page and the
 * notifications page.
 */
async function wordsProblems(page) {
  return page.evaluate(() => {
    const CODES = [
      [
        /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/i,
        'an id',
      ],
      [
        /\b(component|user|group|resource|system|domain|api|template|location):([a-z0-9_.-]+\/)?[a-z0-9][a-z0-9_.-]*/i,
        'an entity ref',
      ],
      [/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/, 'a code'],
      [/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/, 'an ISO timestamp'],
    ];
    const where = window.location.pathname;
    const surfaces = [
      ...[...document.querySelectorAll('.MuiCard-root')].filter(card =>
        /^Fleet/.test(
          card.querySelector('.MuiCardHeader-root')?.textContent?.trim() ?? '',
        ),
      ),
      ...document.querySelectorAll('.MuiDialog-container'),
    ];
    if (/^\/(fleet|notifications)\b/.test(where)) {
      const main = document.querySelector('main') ?? document.body;
      surfaces.push(main);
    }
    const problems = [];
    for (const surface of surfaces) {
      const text = surface.innerText ?? '';
      for (const [pattern, what] of CODES) {
        const found = text.match(pattern);
        if (found) {
          const at = text.indexOf(found[0]);
          problems.push(
            `${what} '${found[0]}' in '${text
              .slice(Math.max(0, at - 40), at + found[0].length + 20)
              .replace(/\s+/g, ' ')}'`,
          );
        }
      }
    }
    return problems;
  });
}

/** Shoots the screen at each width (full page), checking its layout and its words at each. */
async function shot(page, name) {
  step += 1;
  const size = page.viewportSize();
  for (const width of WIDTHS) {
    if (page.viewportSize().width !== width) {
      await page.setViewportSize({ width, height: size.height });
      await page.waitForTimeout(300); // let the layout settle
    }
    const file = path.join(
      artifacts,
      `${String(step).padStart(2, '0')}-${name}-${width}.png`,
    );
    // A dialog's fade may still be running: fast-forward transitions so the shot shows the end state.
    await page.screenshot({
      path: file,
      fullPage: true,
      animations: 'disabled',
    });
    log('screenshot', path.relative(root, file));
    const problems = [
      ...(await layoutProblems(page)),
      ...(await wordsProblems(page)),
    ];
    if (problems.length > 0) {
      throw new Error(`${name} at ${width} px: ${problems.join('; ')}`);
    }
  }
  await page.setViewportSize(size);
}

/** Copies a screenshot for the README (docs/images/), taken at 1280 px. */
async function readmeImage(page, locator, file) {
  const size = page.viewportSize();
  await page.setViewportSize({ width: 1280, height: size.height });
  await page.waitForTimeout(300);
  fs.mkdirSync(docsImages, { recursive: true });
  const target = path.join(docsImages, file);
  if (locator) {
    await locator.screenshot({ path: target, animations: 'disabled' });
  } else {
    await page.screenshot({ path: target, animations: 'disabled' });
  }
  log('README image', path.relative(root, target));
  await page.setViewportSize(size);
}

/** The guest's sign-in through the auth API, as the app makes it: the token and its claims. */
async function guestSignIn() {
  const res = await fetch(`${BACKEND}/api/auth/guest/refresh`, {
    headers: { 'x-requested-with': 'XMLHttpRequest' },
  });
  if (!res.ok) throw new Error(`guest sign-in: HTTP ${res.status}`);
  const body = await res.text();
  const { backstageIdentity } = JSON.parse(body);
  return {
    body,
    token: backstageIdentity.token,
    claims: backstageIdentity.identity.ownershipEntityRefs,
  };
}

/** Whether the catalog has read the org: the guest, a member of group:default/guests. */
async function catalogHasOrg() {
  const token = fs
    .readFileSync(path.join(stateDir, 'dev-token'), 'utf8')
    .trim();
  const res = await fetch(
    `${BACKEND}/api/catalog/entities/by-name/user/default/guest`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  if (!res.ok) return false;
  const entity = await res.json();
  return (entity.relations ?? []).some(
    r => r.type === 'memberOf' && r.targetRef === 'group:default/guests',
  );
}

async function portFree(port) {
  const net = await import('node:net');
  return new Promise(resolve => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(true));
  });
}

async function main() {
  for (const port of [
    FRONTEND_PORT,
    BACKEND_PORT,
    SIM_PORT,
    PROMETHEUS_PORT,
    METRICS_PORT,
  ]) {
    if (!(await portFree(port))) {
      throw new Error(
        `Port ${port} is already in use: stop the portal that runs there first`,
      );
    }
  }
  fs.rmSync(stateDir, { recursive: true, force: true });
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });
  const started = Date.now();

  log('starting the portal with scripts/start.sh');
  const out = fs.openSync(path.join(artifacts, 'portal.log'), 'w');
  portal = spawn('bash', ['scripts/start.sh'], {
    cwd: root,
    detached: true, // its own process group, stopped as a whole at the end
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      FLEET_STATE_DIR: stateDir,
      FLEET_SIM_PORT: String(SIM_PORT),
      FLEET_PROMETHEUS_PORT: String(PROMETHEUS_PORT),
      FLEET_FRONTEND_PORT: String(FRONTEND_PORT),
      FLEET_BACKEND_PORT: String(BACKEND_PORT),
      BROWSER: 'none',
      // No polling in the browser: what refreshes the cards is Fleet's signals.
      APP_CONFIG_fleet_frontend_pollInterval: '0',
      OTEL_EXPORTER_PROMETHEUS_PORT: String(METRICS_PORT),
    },
  });
  portal.on('exit', code => log(`portal exited with ${code}`));

  // A newcomer signs in at once: the guest's token, taken as soon as the backend answers, before
  // the catalog has read the org (its claims are the user alone).
  const early = await waitFor(
    'the guest sign-in',
    async () => ({ ...(await guestSignIn()), orgRead: await catalogHasOrg() }),
    240_000,
    250,
  );
  log(`signed in through the API with claims ${JSON.stringify(early.claims)}`);
  if (early.orgRead || early.claims.includes('group:default/guests')) {
    throw new Error(
      'the catalog had read the org before the first sign-in: this run does not show an early sign-in',
    );
  }

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = await browser.newPage({
    viewport: { width: WIDTHS[0], height: 1000 },
  });
  page.setDefaultTimeout(60_000);
  // The deployments card's polls, as the browser sent them: an unchanged answer should be
  // revalidated (If-None-Match, 304) by the browser's own HTTP cache, with no body sent again.
  const cardPolls = [];
  page.on('response', async response => {
    if (!response.url().includes('/api/fleet/deployments?entityRef=')) return;
    const headers = await response
      .request()
      .allHeaders()
      .catch(() => ({}));
    cardPolls.push({
      status: response.status(),
      conditional: 'if-none-match' in headers,
    });
  });

  // The browser too, as soon as the frontend is served: the guest sign-in page, Enter. The
  // frontend compiles for a minute or more, by when the catalog has mostly read the org, so the
  // browser's first sign-in is answered with the session the backend issued before the org was
  // read (the body above): the browser then holds what a newcomer who signed in at once holds, a
  // token whose claims are the user alone, and the Deploy dialog below must work on it. The
  // request never reaches the backend: a sign-in there would store the user's groups as they are
  // now (the auth backend's user info, which Backstage answers for every token of the user).
  let browserSignIns = 0;
  const isSignIn = url => url.pathname === '/api/auth/guest/refresh';
  await page.route(isSignIn, async route => {
    browserSignIns += 1;
    return route.fulfill({
      status: 200,
      contentType: 'application/json',
      headers: {
        'access-control-allow-origin':
          route.request().headers().origin ?? FRONTEND,
        'access-control-allow-credentials': 'true',
        vary: 'Origin',
      },
      body: early.body,
    });
  });
  const browserDeploys = [];
  page.on('request', request => {
    if (
      request.method() === 'POST' &&
      new URL(request.url()).pathname === '/api/fleet/deployments'
    ) {
      browserDeploys.push(request.headers().authorization);
    }
  });
  await waitFor(
    'the frontend',
    async () => (await fetch(FRONTEND)).ok,
    240_000,
  );
  await page.goto(FRONTEND);
  const enter = page.getByRole('button', { name: 'Enter' });
  await enter.waitFor();
  await enter.click();
  await page.getByRole('link', { name: 'Fleet' }).waitFor();
  if (browserSignIns !== 1) {
    throw new Error(
      `the browser signed in ${browserSignIns} times before the catalog page, not once`,
    );
  }
  // Playwright turns the browser's HTTP cache off while a route is set: the 304 step below needs
  // it back.
  await page.unroute(isSignIn);
  log(
    `signed in in the browser with the session issued before the org was read (the catalog ${
      (await catalogHasOrg()) ? 'has read it by now' : 'has not read it yet'
    })`,
  );

  // start.sh's ready line, then the three places it prints: each answers.
  const ready = await waitFor(
    "start.sh's ready line",
    async () => {
      const text = fs.readFileSync(path.join(artifacts, 'portal.log'), 'utf8');
      const at = text.indexOf('fleet: ready in');
      if (at < 0) return undefined;
      const lines = text.slice(at).split('\n').slice(0, 4);
      return lines.length === 4 ? lines : undefined;
    },
    300_000,
    500,
  );
  const readyAfter = Math.round((Date.now() - started) / 1000);
  log(`${ready[0]} (${readyAfter} s after this test started it)`);
  const urls = ready.slice(1).map(line => line.trim().split(/\s+/).pop());
  for (const url of urls) {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status} when printed`);
    log(`printed ${url}: HTTP ${res.status}`);
  }
  // The ready line means the first health cycle is done.
  const { items: readyClusters } = await api('GET', '/clusters');
  if (
    readyClusters.length !== 3 ||
    !readyClusters.every(c => c.status === 'ONLINE')
  ) {
    throw new Error(
      `at the ready line the clusters are ${JSON.stringify(
        readyClusters.map(c => [c.name, c.status]),
      )}`,
    );
  }
  log('portal ready, 3 clusters ONLINE');

  // The early API token deploys now, without signing in again: the policy reads the guest's
  // groups from the catalog when it decides, not from the token.
  const earlyDeploy = await fetch(`${BACKEND}/api/fleet/deployments`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${early.token}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      entityRef: 'component:default/checkout',
      cluster: 'sim-3',
    }),
  });
  if (earlyDeploy.status !== 201) {
    throw new Error(
      `the early token could not deploy: HTTP ${
        earlyDeploy.status
      } ${await earlyDeploy.text()}`,
    );
  }
  log('the token taken before the org was read deployed checkout to sim-3');

  // The browser, still on its first sign-in, goes to payments' page without a reload.
  await page.evaluate(target => {
    window.history.pushState({}, '', target);
    window.dispatchEvent(new PopStateEvent('popstate'));
  }, '/catalog/default/component/payments');

  await page.getByText('Fleet deployments').first().waitFor();

  const clusters = page.getByRole('list', { name: 'Clusters' });
  for (const name of ['sim-1', 'sim-2']) {
    await clusters
      .locator(`[data-cluster="${name}"]`)
      .getByLabel('Cluster status: ONLINE')
      .waitFor();
  }
  log('a chip per cluster: sim-1 and sim-2 ONLINE');
  await shot(page, 'component-page-clusters-online');

  // Deploy to sim-2 through the dialog.
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Cluster' }).click();
  await page
    .getByRole('option', { name: new RegExp(`^${CLUSTER} — ONLINE`) })
    .click();
  await dialogShot(page, 'deploy-dialog');
  await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });

  const row = page.locator(
    `table[aria-label="Deployments"] tr[data-cluster="${CLUSTER}"]`,
  );
  await row.waitFor();
  log('deployment row appeared:', (await row.innerText()).replace(/\s+/g, ' '));
  await row
    .getByLabel('Deployment status: DEPLOYED')
    .waitFor({ timeout: 60_000 });
  if (
    browserDeploys.length !== 1 ||
    browserDeploys[0] !== `Bearer ${early.token}`
  ) {
    throw new Error(
      `the dialog's deploy was not sent once with the token issued before the org was read (${browserDeploys.length} requests)`,
    );
  }
  log(
    'deployment DEPLOYED by the browser on the token issued before the org was read',
  );
  await shot(page, 'deployed');

  await kubernetesTab(page);
  await runTemplate(page, urls[2]);
  await page.goto(`${FRONTEND}/catalog/default/component/payments`);
  await row.getByLabel('Deployment status: DEPLOYED').waitFor();

  // Drift: change the image behind Fleet's back; the next reconcile reports it on the card.
  await simulatorDrift(CLUSTER, 'payments', 'evil:latest');
  const differences = page.getByRole('list', {
    name: `Differences on ${CLUSTER}`,
  });
  await differences
    .getByText('/spec/template/spec/containers/0/image')
    .waitFor({ timeout: 90_000 });
  await row.getByLabel('Sync status: OUT OF SYNC').waitFor();
  log('drift reported: OUT OF SYNC with the image path');
  await shot(page, 'drift-out-of-sync');

  // Take the cluster down and run two health cycles: the first failure is the grace period, the
  // second confirms the outage once it spans minOutage (10 s in scripts/start.sh's config).
  await simulatorFault(CLUSTER, 'down');
  const firstFailure = await runHealthCycle();
  await sleep(
    Math.max(0, Date.parse(firstFailure.startedAt) + 10_000 - Date.now()),
  );
  const cycle = await runHealthCycle();
  const confirmedAt = Date.now();
  log('health cycles ran; transitions:', JSON.stringify(cycle.transitions));

  // No reload, no polling: only the signal Fleet published when the cycle committed the
  // transition can make the card fetch again. How soon is a figure (logged), not a test: a loaded
  // machine may take seconds; the bound only says it came without a reload.
  await clusters
    .locator(`[data-cluster="${CLUSTER}"]`)
    .getByLabel('Cluster status: OFFLINE')
    .waitFor({ timeout: 15_000 });
  log(
    `chip turned OFFLINE ${
      Date.now() - confirmedAt
    } ms after the confirming cycle (signal, polling off)`,
  );
  await shot(page, 'chip-offline-by-signal');
  const scraped = await (
    await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`)
  ).text();
  fs.writeFileSync(path.join(artifacts, 'metrics.txt'), scraped);
  const offline = scraped.match(
    /^fleet_clusters\{status="OFFLINE"[^}]*\} (\d+)/m,
  );
  if (!offline || Number(offline[1]) !== 1) {
    throw new Error(
      `the Prometheus exporter does not count 1 OFFLINE cluster: ${offline?.[0]}`,
    );
  }
  log(`metrics on :${METRICS_PORT}: ${offline[0]}`);
  await row
    .getByLabel('Deployment status: DEGRADED')
    .waitFor({ timeout: 60_000 });
  // The reason in words, its code on hover.
  await row
    .getByTitle('CLUSTER_OFFLINE')
    .filter({ hasText: 'Cluster offline' })
    .first()
    .waitFor();
  log('deployment DEGRADED / CLUSTER_OFFLINE');
  await shot(page, 'cluster-offline-deployment-degraded');
  await readmeImage(
    page,
    page
      .getByText('Fleet deployments', { exact: true })
      .first()
      .locator('xpath=ancestor::*[contains(@class, "MuiPaper-root")][1]'),
    'component-card.png',
  );

  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Cluster' }).click();
  const offlineOption = page.getByRole('option', {
    name: new RegExp(`^${CLUSTER} — OFFLINE`),
  });
  await offlineOption.waitFor();
  if ((await offlineOption.getAttribute('aria-disabled')) !== 'true') {
    throw new Error(`${CLUSTER} is not disabled in the picker`);
  }
  await offlineOption.getByText(/^Unavailable: Outage confirmed/).waitFor();
  log('OFFLINE cluster disabled in the picker, with its reason');
  await page.waitForTimeout(500); // let the menu finish opening for the screenshot
  await shot(page, 'picker-offline-disabled');
  await page.keyboard.press('Escape');

  // The cluster's own catalog page (published by the catalog module) and the fleet page.
  await waitFor(
    'the sim-2 cluster page with its Fleet card',
    async () => {
      await page.goto(`${FRONTEND}/catalog/default/resource/${CLUSTER}`);
      await page
        .getByText(`Fleet cluster ${CLUSTER}`)
        .waitFor({ timeout: 15_000 });
      return true;
    },
    120_000,
    2000,
  );
  await page.getByLabel('Cluster status: OFFLINE').first().waitFor();
  await page
    .getByRole('list', { name: 'Applications on this cluster' })
    .getByTitle('component:default/payments')
    .getByText('payments', { exact: true })
    .waitFor();
  log('cluster page: OFFLINE, with payments on it');
  await shot(page, 'cluster-page');

  await page.goto(`${FRONTEND}/fleet`);
  const table = page.getByRole('table', { name: 'Clusters' });
  await table
    .locator(`tr[data-cluster="${CLUSTER}"]`)
    .getByLabel('Cluster status: OFFLINE')
    .waitFor();
  await page
    .getByRole('list', { name: 'Events' })
    .getByText(/ONLINE → OFFLINE/)
    .first()
    .waitFor();
  const eventRows = page
    .getByRole('list', { name: 'Events' })
    .getByRole('listitem');
  await page
    .getByRole('list', { name: 'Events' })
    .getByText(/payments on sim-2: DEPLOYED → DEGRADED/)
    .first()
    .waitFor();
  const eventTexts = await eventRows.allInnerTexts();
  const bare = eventTexts.filter(text => UUID.test(text));
  if (eventTexts.length === 0 || bare.length > 0) {
    throw new Error(
      `event rows show a bare id: ${JSON.stringify(
        bare.length ? bare : eventTexts,
      )}`,
    );
  }
  log(
    `fleet page: clusters table and ${
      eventTexts.length
    } events, none with a bare id, e.g. "${
      eventTexts.find(t => t.includes('payments on sim-2'))?.split('\n')[0]
    }"`,
  );
  await shot(page, 'fleet-page');
  await readmeImage(page, undefined, 'fleet-page.png');
  await fleetMap(page);
  // The page scrolls inside Backstage's content pane: bring the events up for their own shot.
  await page
    .getByRole('list', { name: 'Events' })
    .evaluate(el => el.scrollIntoView({ block: 'start' }));
  await shot(page, 'fleet-page-events');
  await page
    .getByText('Fleet', { exact: true })
    .first()
    .evaluate(el => el.scrollIntoView({ block: 'start' }));

  // A permission-aware UI, with links: a cluster's name on a card opens its catalog page; a
  // kubernetes-cluster Resource Fleet does not manage says so; a component the guest may not
  // deploy (ledger: owned by finance, no cnp.io/deployers) shows its buttons disabled, with why.
  await page.goto(`${FRONTEND}/catalog/default/component/payments`);
  await page
    .getByRole('list', { name: 'Clusters' })
    .locator('[data-cluster="sim-1"]')
    .getByRole('link', { name: 'sim-1', exact: true })
    .click();
  await page.waitForURL(/\/catalog\/default\/resource\/sim-1$/);
  await page.getByText('Fleet cluster sim-1').first().waitFor();
  log("a cluster's name on payments' card opened its catalog page");
  await waitFor(
    'the legacy-cluster Resource page',
    async () => {
      await page.goto(`${FRONTEND}/catalog/default/resource/legacy-cluster`);
      await page
        .getByText(/legacy-cluster is not managed by Fleet/)
        .waitFor({ timeout: 15_000 });
      return true;
    },
    60_000,
    2000,
  );
  log('legacy-cluster (not in Fleet): "not managed by Fleet", no error');
  await shot(page, 'cluster-not-managed-by-fleet');
  await page.goto(`${FRONTEND}/catalog/default/component/ledger`);
  await page.getByText('Fleet deployments').first().waitFor();
  const ledgerDeploy = page.getByRole('button', {
    name: 'Deploy',
    exact: true,
  });
  // Disabled is not enough: the button is disabled while the permission is being checked too.
  // A denied button sits in the span that carries its tooltip; an allowed one ends up enabled.
  await page.waitForFunction(
    () =>
      [...document.querySelectorAll('button')].some(
        b =>
          b.textContent?.trim() === 'Deploy' &&
          (!b.disabled || b.parentElement?.tagName === 'SPAN'),
      ),
    undefined,
    { timeout: 30_000 },
  );
  if (!(await ledgerDeploy.isDisabled())) {
    throw new Error("ledger's Deploy button is enabled for the guest");
  }
  await ledgerDeploy.locator('xpath=..').hover();
  await page.getByText('You are not allowed to deploy ledger').waitFor();
  log(
    "ledger (finance's): Deploy disabled for the guest, the tooltip says why",
  );
  await shot(page, 'deploy-not-allowed');
  // The backend agrees: the guest's same request through the API is refused.
  const refused = await fetch(`${BACKEND}/api/fleet/deployments`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${(await guestSignIn()).token}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      entityRef: 'component:default/ledger',
      cluster: 'sim-1',
    }),
  });
  if (refused.status !== 403) {
    throw new Error(
      `deploying ledger as the guest answered ${refused.status}, not 403`,
    );
  }
  log('the API refuses it too: 403');

  // The catalog's annotations, read by the backend with its own service credentials: payments'
  // cnp.io/clusters (sim-1,sim-2) placed it on sim-1 too, and a deploy without an image takes
  // the component's cnp.io/image.
  await waitFor(
    'payments placed on sim-1 by its cnp.io/clusters annotation',
    async () =>
      (
        await api('GET', '/deployments?entityRef=component:default/payments')
      ).items.some(d => d.cluster === 'sim-1'),
    90_000,
    2000,
  );
  log('payments placed on sim-1 by its cnp.io/clusters annotation');
  const checkout = await api('POST', '/deployments', {
    entityRef: 'component:default/checkout',
    cluster: 'sim-1',
  });
  if (checkout.image !== 'nginx:1.27') {
    throw new Error(
      `a deploy without an image used ${checkout.image}, not checkout's cnp.io/image nginx:1.27`,
    );
  }
  log('a deploy without an image took the cnp.io/image annotation: nginx:1.27');

  // The release model, on payments' page: each cluster keeps its own version.
  await simulatorFault(CLUSTER, 'ok');
  await runHealthCycle();
  await page.goto(`${FRONTEND}/catalog/default/component/payments`);
  const other = page.locator(
    `table[aria-label="Deployments"] tr[data-cluster="sim-1"]`,
  );
  await other.getByLabel('Deployment status: DEPLOYED').waitFor();
  await row.getByLabel('Deployment status: DEPLOYED').waitFor();
  const otherBefore = await api(
    'GET',
    '/deployments?entityRef=component:default/payments&cluster=sim-1',
  );
  const otherImage = otherBefore.items[0].image;
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Cluster' }).click();
  await page
    .getByRole('option', { name: new RegExp(`^${CLUSTER} — ONLINE`) })
    .click();
  await dialog.getByLabel('Image').fill('nginx:1.28');
  await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
  await row.getByText('nginx:1.28').waitFor({ timeout: 60_000 });
  await row
    .getByLabel('Deployment status: DEPLOYED')
    .waitFor({ timeout: 60_000 });
  await page
    .getByText(/1\.28 on 1/)
    .first()
    .waitFor();
  const otherAfter = await api(
    'GET',
    '/deployments?entityRef=component:default/payments&cluster=sim-1',
  );
  if (
    otherAfter.items[0].image !== otherImage ||
    otherAfter.items[0].revision !== otherBefore.items[0].revision
  ) {
    throw new Error(
      `a deploy to ${CLUSTER} changed sim-1: ${JSON.stringify(
        otherAfter.items[0],
      )}`,
    );
  }
  await other.getByText(otherImage).waitFor();
  log(
    `second version on ${CLUSTER} only; sim-1 still runs ${otherImage} at revision ${otherAfter.items[0].revision}`,
  );
  await shot(page, 'release-one-cluster-new-version');

  await page.getByRole('button', { name: `History on ${CLUSTER}` }).click();
  const history = page.getByRole('dialog');
  await history
    .getByRole('table', { name: 'Revisions' })
    .getByText('nginx:1.28')
    .waitFor();
  log('history lists the revisions');
  await dialogShot(page, 'release-history');
  // Where a newcomer saw words broken mid-token (deplo/y, DEPLOYE/D, image tags split): 1440 px.
  {
    const size = page.viewportSize();
    await page.setViewportSize({ width: 1440, height: size.height });
    await page.waitForTimeout(300);
    const problems = [
      ...(await layoutProblems(page)),
      ...(await wordsProblems(page)),
    ];
    await page.setViewportSize(size);
    if (problems.length > 0) {
      throw new Error(`release-history at 1440 px: ${problems.join('; ')}`);
    }
    log('history at 1440 px: no word broken, no code');
  }
  await history.getByRole('button', { name: 'Close' }).click();
  await history.waitFor({ state: 'detached' });

  await page.getByRole('button', { name: `Rollback on ${CLUSTER}` }).click();
  const rollback = page.getByRole('dialog');
  const confirmRollback = rollback.getByRole('button', {
    name: /^Roll back to revision \d+$/,
  });
  await confirmRollback.waitFor();
  await dialogShot(page, 'release-rollback-dialog');
  // The revision the dialog offers, and what it ran: the rollback must bring exactly that back.
  const target = Number(
    (await confirmRollback.innerText()).match(/revision (\d+)/i)[1],
  );
  const beforeRollback = (
    await api(
      'GET',
      `/deployments?entityRef=component:default/payments&cluster=${CLUSTER}`,
    )
  ).items[0];
  const { items: revisions } = await api(
    'GET',
    `/deployments/${beforeRollback.id}/revisions`,
  );
  const wanted = revisions.find(r => r.revision === target);
  if (!wanted || wanted.revision >= beforeRollback.revision) {
    throw new Error(
      `the dialog offers revision ${target}, not an earlier one of ${JSON.stringify(
        revisions.map(r => r.revision),
      )}`,
    );
  }
  // The dialog must ask for that revision: without it the backend picks the newest earlier one
  // that was DEPLOYED, the same here, and the history below could not tell them apart.
  const [rollbackRequest] = await Promise.all([
    page.waitForRequest(
      request =>
        request.method() === 'POST' &&
        /\/api\/fleet\/deployments\/[^/]+\/rollback$/.test(
          new URL(request.url()).pathname,
        ),
    ),
    confirmRollback.click(),
  ]);
  const asked = rollbackRequest.postDataJSON()?.toRevision;
  if (asked !== target) {
    throw new Error(
      `the dialog asked to roll back to ${JSON.stringify(
        asked,
      )}, not to revision ${target}`,
    );
  }
  await rollback.waitFor({ state: 'detached' });
  await row
    .getByText('nginx:1.28')
    .waitFor({ state: 'detached', timeout: 60_000 });
  await row
    .getByLabel('Deployment status: DEPLOYED')
    .waitFor({ timeout: 60_000 });
  const rolledBack = await api(
    'GET',
    `/deployments?entityRef=component:default/payments&cluster=${CLUSTER}`,
  );
  const now = rolledBack.items[0];
  if (
    now.image !== wanted.image ||
    now.status !== 'DEPLOYED' ||
    now.revision <= beforeRollback.revision
  ) {
    throw new Error(
      `rollback to revision ${target} (${wanted.image}) left ${JSON.stringify({
        image: now.image,
        status: now.status,
        revision: now.revision,
      })}`,
    );
  }
  // Which revision it copied, in the deployment's history: two earlier revisions can share an
  // image, so the image alone does not tell.
  const { items: rollbackEvents } = await api(
    'GET',
    `/deployments/${now.id}/events`,
  );
  const requested = rollbackEvents.find(e => e.reason === 'REVISION_ROLLBACK');
  const copied = requested?.message.match(
    /Rollback to revision (\d+) requested$/,
  )?.[1];
  if (Number(copied) !== target) {
    throw new Error(
      `the rollback's event says ${JSON.stringify(
        requested?.message,
      )}, not a rollback to revision ${target}`,
    );
  }
  log(
    `rolled back on ${CLUSTER} to revision ${target}'s ${wanted.image}: now revision ${now.revision}`,
  );
  await shot(page, 'release-rolled-back');

  // Undeploy, on a cluster payments' placement does not name (its cnp.io/clusters names sim-1
  // and sim-2, which the reconcile would place it on again).
  const SPARE = 'sim-3';
  await api('POST', '/deployments', {
    entityRef: 'component:default/payments',
    cluster: SPARE,
  });
  const spare = page.locator(
    `table[aria-label="Deployments"] tr[data-cluster="${SPARE}"]`,
  );
  await spare
    .getByLabel('Deployment status: DEPLOYED')
    .waitFor({ timeout: 60_000 });
  await page.getByRole('button', { name: `Undeploy from ${SPARE}` }).click();
  const undeploy = page.getByRole('dialog');
  await undeploy.getByText(`Undeploy payments from ${SPARE}?`).waitFor();
  await dialogShot(page, 'release-undeploy-confirmation');
  await undeploy.getByRole('button', { name: 'Undeploy' }).click();
  await undeploy.waitFor({ state: 'detached' });
  await spare.waitFor({ state: 'detached', timeout: 60_000 });
  const paymentsObjects = async () =>
    (await simulatorObjects(SPARE)).filter(
      o =>
        o.metadata?.name === 'payments' &&
        ['Deployment', 'Service', 'PodDisruptionBudget'].includes(o.kind),
    );
  if ((await paymentsObjects()).length > 0) {
    throw new Error(`payments' objects are still on ${SPARE} after undeploy`);
  }
  // A whole reconcile run later (its runs counted by the backend's exporter), nothing came back.
  const reconcileRuns = async () => {
    const text = await (
      await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`)
    ).text();
    const m = text.match(
      /^fleet_reconcile_duration(?:_seconds)?_count(?:\{[^}]*\})? (\d+)/m,
    );
    if (!m) throw new Error('the exporter shows no reconcile run count');
    return Number(m[1]);
  };
  const runsAtUndeploy = await reconcileRuns();
  await waitFor(
    'two reconcile runs after the undeploy',
    async () => (await reconcileRuns()) >= runsAtUndeploy + 2,
    120_000,
    1000,
  );
  const after = await api(
    'GET',
    `/deployments?entityRef=component:default/payments&cluster=${SPARE}`,
  );
  if (after.items.length > 0 || (await paymentsObjects()).length > 0) {
    throw new Error(`the reconcile re-created payments on ${SPARE}`);
  }
  log(
    `undeployed from ${SPARE}: its row and its objects are gone, and stay gone across two reconcile runs`,
  );
  await shot(page, 'release-undeployed');

  // Playwright reports a revalidated answer as the cached 200; the backend's log has the 304s.
  // A reload asks again for an answer the browser holds: unchanged (no reconcile run wrote a
  // sync time in between), it must come back 304 Not Modified, with no body.
  const notModifiedInLog = () =>
    (
      fs
        .readFileSync(path.join(artifacts, 'portal.log'), 'utf8')
        .match(
          /GET \/api\/fleet\/deployments\?entityRef=\S+ HTTP\/1\.1" 304/g,
        ) ?? []
    ).length;
  const notModifiedBefore = notModifiedInLog();
  const notModified = await waitFor(
    "a reloaded card's deployments answered 304 Not Modified",
    async () => {
      await page.reload();
      await row.getByLabel('Deployment status: DEPLOYED').waitFor();
      await sleep(1000); // the portal's log line of the answer
      const count = notModifiedInLog();
      return count > notModifiedBefore ? count : undefined;
    },
    60_000,
    500,
  );
  const conditional = cardPolls.filter(p => p.conditional).length;
  log(
    `deployments card polls: ${cardPolls.length}, of which ${conditional} conditional (If-None-Match); ` +
      `the backend answered ${notModified} of them 304 Not Modified (the reload's among them)`,
  );
  if (conditional === 0) {
    throw new Error(
      'no poll of the deployments card was conditional: the browser does not revalidate its cached answers',
    );
  }

  await brokenRollout(page, {
    api,
    waitFor,
    shot,
    dialogShot,
    log,
    FRONTEND,
  });
  await progressiveRelease(page);
  await judgedRelease(page, {
    api,
    waitFor,
    shot,
    readmeImage,
    log,
    simulatorRequest,
    FRONTEND,
    PROMETHEUS_PORT,
  });
  await defaultStrategyRelease(page, {
    api,
    waitFor,
    shot,
    log,
    FRONTEND,
    PROMETHEUS_PORT,
  });
  await repositoryManifests(page);
  await governedPromotion(page, {
    api,
    waitFor,
    shot,
    readmeImage,
    guestSignIn,
    log,
    FRONTEND,
    BACKEND,
  });
  await notificationsPage(page);
}

/**
 * The guest's notifications (the owner of payments and inventory): Fleet's news in words, with
 * components by name and no id, code or machine timestamp (the sweep of `shot`).
 */
async function notificationsPage(page) {
  await page.goto(`${FRONTEND}/notifications`);
  await page
    .getByText(/payments/)
    .first()
    .waitFor({ timeout: 60_000 });
  log('notifications page lists Fleet news about payments');
  await shot(page, 'notifications');
}

/** inventory's deployments by cluster, from the API. */
async function inventoryDeployments() {
  const { items } = await api(
    'GET',
    '/deployments?entityRef=component:default/inventory',
  );
  return new Map(items.map(d => [d.cluster, d]));
}

/**
 * A component that brings its own manifests (inventory, read over Git's smart HTTP from the Git
 * host behind the backend): its first deploy from the card, the placement taking it to its other
 * cluster, then version v2 previewed in the Deploy dialog (the Job it adds, the ConfigMap it
 * prunes) before it is confirmed, and the cluster's objects afterwards.
 */
async function repositoryManifests(page) {
  await page.goto(`${FRONTEND}/catalog/default/component/inventory`);
  await page.getByText('Fleet deployments', { exact: true }).first().waitFor();

  // The first deploy registers the application: nothing to preview it against yet.
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  let dialog = page.getByRole('dialog');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Cluster' }).click();
  await page.getByRole('option', { name: /^sim-1 — ONLINE/ }).click();
  await dialog.getByRole('textbox', { name: 'Version' }).fill('v1');
  await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });

  // cnp.io/clusters places it on sim-1 and sim-2: the reconcile deploys sim-2 by itself.
  await waitFor(
    'inventory DEPLOYED on sim-1 and sim-2',
    async () => {
      const deployments = await inventoryDeployments();
      return ['sim-1', 'sim-2'].every(
        c => deployments.get(c)?.status === 'DEPLOYED',
      );
    },
    120_000,
    1000,
  );
  log('inventory (its own manifests) DEPLOYED on sim-1 and sim-2');

  // v2 to sim-2, previewed before it is confirmed.
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  dialog = page.getByRole('dialog');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Cluster' }).click();
  await page.getByRole('option', { name: /^sim-2 — ONLINE/ }).click();
  await dialog.getByRole('textbox', { name: 'Version' }).fill('v2');
  if (
    !(await dialog
      .getByRole('button', { name: 'Deploy', exact: true })
      .isDisabled())
  ) {
    throw new Error(
      'the Deploy button of inventory is enabled before a preview',
    );
  }
  await dialog.getByRole('button', { name: 'Preview', exact: true }).click();
  const preview = dialog.getByRole('table', { name: 'Preview of sim-2' });
  await preview.waitFor({ timeout: 60_000 });
  const actions = Object.fromEntries(
    await preview
      .locator('tr[data-action]')
      .evaluateAll(rows =>
        rows.map(r => [
          r.querySelectorAll('td')[1]?.textContent?.trim() ?? '',
          r.getAttribute('data-action'),
        ]),
      ),
  );
  if (
    actions['inventory-migrate'] !== 'create' ||
    actions['inventory-config'] !== 'prune' ||
    actions.inventory === undefined
  ) {
    throw new Error(
      `the preview of v2 on sim-2 is not what v2 changes: ${JSON.stringify(
        actions,
      )}`,
    );
  }
  log('preview of v2 on sim-2:', JSON.stringify(actions));
  await dialogShot(page, 'manifests-preview');
  await readmeImage(page, dialog, 'manifests-preview.png');
  await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });

  const v2 = await waitFor(
    'inventory v2 DEPLOYED on sim-2',
    async () => {
      const deployment = (await inventoryDeployments()).get('sim-2');
      if (deployment?.status !== 'DEPLOYED') return undefined;
      const { items } = await api(
        'GET',
        `/deployments/${deployment.id}/revisions`,
      );
      return items[0]?.source?.version === 'v2' ? items[0] : undefined;
    },
    120_000,
    1000,
  );
  const objects = await simulatorObjects('sim-2');
  const has = (kind, name) =>
    objects.some(o => o.kind === kind && o.metadata?.name === name);
  if (
    !has('Job', 'inventory-migrate') ||
    has('ConfigMap', 'inventory-config')
  ) {
    throw new Error(
      'sim-2 does not run what v2 says: the Job should be there and the ConfigMap pruned',
    );
  }
  log(
    `inventory v2 on sim-2 (commit ${v2.source.commit.slice(
      0,
      7,
    )}): the Job created, the ConfigMap pruned`,
  );
  await page
    .locator('table[aria-label="Deployments"] tr[data-cluster="sim-2"]')
    .getByLabel('Deployment status: DEPLOYED')
    .waitFor({ timeout: 60_000 });
  await shot(page, 'manifests-card');
}

/**
 * The component's Kubernetes tab (Backstage's Kubernetes plugin, its clusters supplied by Fleet):
 * the cluster Fleet deployed to, the Deployment's pods (owned by its ReplicaSet), and a pod's
 * logs, read through the plugin's proxy with the cluster's own kubeconfig credentials.
 */
async function kubernetesTab(page) {
  await page.goto(`${FRONTEND}/catalog/default/component/payments/kubernetes`);
  const cluster = page
    .locator('[class*="MuiAccordion-root"]')
    .filter({ has: page.getByText(CLUSTER, { exact: true }) })
    .first();
  await cluster.getByText(/^\d+ pods?$/).waitFor({ timeout: 60_000 });
  log(
    'Kubernetes tab:',
    (
      await cluster
        .locator('[class*="MuiAccordionSummary-root"]')
        .first()
        .innerText()
    )
      .replace(/\s+/g, ' ')
      .trim(),
  );
  await cluster.getByText(CLUSTER, { exact: true }).click();
  await cluster
    .locator('[class*="MuiAccordion-root"]')
    .filter({ hasText: 'Deployment' })
    .first()
    .locator('[class*="MuiAccordionSummary-expandIcon"]')
    .first()
    .click(); // the Deployment's accordion (its name opens a drawer)
  const podName = /^payments-[a-z0-9]+-[a-z0-9]{5}$/;
  const pods = cluster.getByRole('button', { name: podName });
  await pods.first().waitFor();
  const names = await pods.allInnerTexts();
  log(`pods of payments on ${CLUSTER}:`, names.join(', '));
  if (names.length < 1) throw new Error('no pod in the Kubernetes tab');
  await shot(page, 'kubernetes-tab-pods');

  await pods.first().click();
  await page.getByRole('button', { name: 'get logs' }).first().click();
  await page
    .getByRole('dialog')
    .getByText('Listening on 0.0.0.0:8000')
    .waitFor({ timeout: 30_000 });
  log('pod logs shown through the Kubernetes proxy');
  await dialogShot(page, 'kubernetes-pod-logs');
}

/**
 * The Fleet template, as a user runs it from the page start.sh printed: a new component, registered
 * with Fleet and deployed to sim-1 by the template's steps, on the user's behalf.
 */
async function runTemplate(page, url) {
  // A new name each run: the portal keeps what the template publishes (.fleet/scaffolded/).
  const NAME = `hello-${Date.now().toString(36)}`;
  await page.goto(url);
  await page.getByRole('textbox', { name: /^Name/ }).fill(NAME);
  await shot(page, 'template-form');
  for (let i = 0; i < 6; i++) {
    const create = page.getByRole('button', { name: 'Create', exact: true });
    if (await create.isVisible()) {
      await create.click();
      break;
    }
    await page.getByRole('button', { name: /^(Next|Review)$/ }).click();
  }
  // The task page: every step done, and the output saying the deployment's status.
  const outcome = await Promise.race([
    page
      .getByText(/is Deployed/)
      .first()
      .waitFor({ timeout: 180_000 })
      .then(() => 'DEPLOYED'),
    page
      .getByText(/failed/i)
      .first()
      .waitFor({ timeout: 180_000 })
      .then(() => 'failed'),
  ]);
  await shot(page, 'template-task');
  if (outcome !== 'DEPLOYED') {
    throw new Error(`the Fleet template's task failed (see the screenshot)`);
  }
  const { items } = await api(
    'GET',
    `/deployments?entityRef=component:default/${NAME}`,
  );
  if (items.length !== 1 || items[0].cluster !== 'sim-1') {
    throw new Error(
      `the template did not deploy ${NAME} to sim-1: ${JSON.stringify(items)}`,
    );
  }
  log(`template: ${NAME} registered and ${items[0].status} on sim-1`);
  // The template ends on the new component's page, in the catalog, with its Fleet card.
  await page.getByRole('link', { name: /Open the component/ }).click();
  await page.waitForURL(new RegExp(`/catalog/default/component/${NAME}`), {
    timeout: 60_000,
  });
  await page
    .locator('table[aria-label="Deployments"] tr[data-cluster="sim-1"]')
    .getByLabel('Deployment status: DEPLOYED')
    .waitFor({ timeout: 60_000 });
  log(`template: ${NAME}'s page shows its deployment DEPLOYED on sim-1`);
  await shot(page, 'template-entity-page');
}

/**
 * The fleet map: the three clusters labelled by region and env (as an operator labels them,
 * `PATCH /clusters/:name`), each a tile in its cell in its status, sim-2's OFFLINE.
 */
async function fleetMap(page) {
  const labels = {
    'sim-1': { region: 'eu-west', env: 'staging' },
    'sim-2': { region: 'eu-west', env: 'prod' },
    'sim-3': { region: 'us-east', env: 'prod' },
  };
  for (const [name, l] of Object.entries(labels)) {
    await api('PATCH', `/clusters/${name}`, { labels: l });
  }
  await page.reload();
  const map = page.getByRole('table', { name: 'Fleet map' });
  const tile = (cell, name) =>
    map.getByRole('cell', { name: cell }).locator(`[data-cluster="${name}"]`);
  await tile('eu-west, staging', 'sim-1').waitFor({ timeout: 60_000 });
  await tile('eu-west, prod', 'sim-2')
    .getByText('Offline', { exact: true })
    .waitFor();
  await tile('us-east, prod', 'sim-3').waitFor();
  const text = await tile('eu-west, prod', 'sim-2').getAttribute('aria-label');
  if (!/^sim-2: Offline, \d+ deployments?$/.test(text ?? '')) {
    throw new Error(`sim-2's tile says ${text}`);
  }
  log(`fleet map: region × env, ${text}`);
  await map.evaluate(el => el.scrollIntoView({ block: 'start' }));
  await shot(page, 'fleet-map');
  await readmeImage(page, map, 'fleet-map.png');
}

/** Tells the simulator's Prometheus what to answer for queries naming these labels. */
async function prometheusRule(match, value) {
  await simulatorRequest('/_sim/prometheus/rules', { match, value });
}

/** payments' deployments, by cluster. */
async function paymentsDeployments() {
  const { items } = await api(
    'GET',
    '/deployments?entityRef=component:default/payments',
  );
  return new Map(items.map(d => [d.cluster, d]));
}

/**
 * A progressive release of payments over its three clusters, from the Release dialog: sim-1 (a
 * Rollout cluster) alone first, held at 20 % until promoted; sim-2's success rate then falls to
 * 0.5, so its first measurement aborts the release, which rolls sim-1 and sim-2 back and never
 * touches sim-3.
 */
async function progressiveRelease(page) {
  const WAVES = ['sim-1', 'sim-2', 'sim-3'];
  const NEW_IMAGE = 'ghcr.io/acme/payments:1.5.0';
  const FAILING = 'sim-2';

  // A strategy needs a deployment of payments on every cluster it goes to (sim-3 was undeployed).
  await api('POST', '/deployments', {
    entityRef: 'component:default/payments',
    cluster: 'sim-3',
  });
  const before = await waitFor(
    'payments DEPLOYED on sim-1, sim-2 and sim-3',
    async () => {
      const deployments = await paymentsDeployments();
      return WAVES.every(c => deployments.get(c)?.status === 'DEPLOYED')
        ? deployments
        : undefined;
    },
    90_000,
    1000,
  );
  const previous = Object.fromEntries(WAVES.map(c => [c, before.get(c).image]));
  log('before the release, payments runs', JSON.stringify(previous));
  const { rules } = await simulatorRequest('/_sim/prometheus/rules');
  if (!rules.some(r => Object.keys(r.match).length === 0 && r.value > 0.995)) {
    throw new Error(
      `scripts/start.sh seeded no healthy default Prometheus rule: ${JSON.stringify(
        rules,
      )}`,
    );
  }

  await page.goto(`${FRONTEND}/catalog/default/component/payments`);
  const section = page.getByTestId('fleet-release');
  await section.waitFor();
  for (const cluster of WAVES) {
    await page
      .locator(`table[aria-label="Deployments"] tr[data-cluster="${cluster}"]`)
      .getByLabel('Deployment status: DEPLOYED')
      .waitFor({ timeout: 60_000 });
  }

  await page.getByRole('button', { name: 'Release', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('Release payments').waitFor();
  await dialog.getByRole('textbox', { name: 'Image' }).fill(NEW_IMAGE);
  for (const cluster of WAVES) {
    await dialog
      .getByRole('checkbox', { name: new RegExp(`^${cluster} — `) })
      .check();
  }
  await dialog
    .getByRole('checkbox', { name: 'Progressive (strategy)' })
    .check();
  const strategy = [
    'waves:',
    '  - clusters: [sim-1]',
    '  - clusters: [sim-2]',
    '  - clusters: [sim-3]',
    'canary:',
    '  steps:',
    '    - setWeight: 20',
    '    - pause: {}',
    '    - setWeight: 60',
    '    - setWeight: 100',
    'analysis:',
    '  templates:',
    '    - name: success-rate',
    '      interval: 2s',
    '      failureLimit: 0',
    '      successCondition: result[0] >= 0.995',
    '      provider:',
    '        prometheus:',
    `          address: http://127.0.0.1:${PROMETHEUS_PORT}`,
    '          query: sum(rate(http_requests_total{app="{{app}}",cluster="{{cluster}}",code!~"5.."}[1m])) / sum(rate(http_requests_total{app="{{app}}",cluster="{{cluster}}"}[1m]))',
    'rollback: { timeout: 5m }',
    '',
  ].join('\n');
  const yaml = dialog.getByRole('textbox', { name: 'Strategy (YAML)' });
  await yaml.fill(strategy);
  await dialogShot(page, 'progressive-release-dialog');
  await dialog.getByRole('button', { name: 'Start release' }).click();
  await dialog.waitFor({ state: 'detached' });

  // Wave 1: sim-1 alone, its canary (an Argo Rollout there) at 20 %, waiting for Promote.
  const cell = cluster =>
    section.getByTestId(`fleet-release-cluster-${cluster}`);
  const first = cell('sim-1');
  await section
    .locator(
      '[data-testid="fleet-release-cluster-sim-1"][data-state="RUNNING"]',
    )
    .getByText(/^Step 2 \/ 4 · Rollout · waiting for promote$/)
    .waitFor({ timeout: 120_000 });
  await first.getByTestId('weight').getByText('20%').waitFor();
  // The analysis ran at least once there, against the default healthy rule.
  await first
    .getByText(/success-rate: .*Successful/)
    .waitFor({ timeout: 60_000 });
  for (const cluster of ['sim-2', 'sim-3']) {
    const state = await cell(cluster).getAttribute('data-state');
    if (state !== 'WAITING')
      throw new Error(`${cluster} is ${state} while wave 1 runs`);
  }
  await section
    .getByRole('group', { name: 'Wave 2' })
    .getByText('Wave 2 (waiting)')
    .waitFor();
  const { items: releases } = await api(
    'GET',
    `/applications/${before.get('sim-1').applicationId}/releases`,
  );
  const release = releases.find(r => r.image === NEW_IMAGE);
  if (!release) throw new Error('the release is not in the API');
  const sim1 = release.progress.clusters.find(c => c.cluster === 'sim-1');
  if (sim1.mode !== 'rollout' || sim1.weight !== 20 || !sim1.awaitingPromote) {
    throw new Error(
      `sim-1 is not a Rollout canary held at 20 %: ${JSON.stringify(sim1)}`,
    );
  }
  log(
    `release ${release.id}: wave 1 (sim-1) RUNNING as a Rollout at 20 %, waiting for promote`,
  );
  // The page scrolls inside Backstage's content pane, past what a full-page shot takes: bring
  // the releases section (its three waves) to the top.
  await section.evaluate(el => el.scrollIntoView({ block: 'start' }));
  await shot(page, 'progressive-wave-1-canary-20');
  // The version matrix: the version the release brings highlighted, sim-1's canary in it.
  const matrix = page.getByRole('table', { name: 'Version matrix' });
  await matrix
    .locator('tr[data-cluster="sim-1"]')
    .getByText('canary running, 20 %')
    .waitFor({ timeout: 60_000 });
  await matrix
    .getByRole('columnheader', {
      name: `${NEW_IMAGE.split(':').pop()} (releasing)`,
    })
    .waitFor();
  log('version matrix: 1.5.0 releasing, sim-1 canary running at 20 %');
  await readmeImage(page, matrix, 'version-matrix.png');

  // The next wave's cluster goes bad; promote sim-1 and let the release go on.
  await prometheusRule({ app: 'payments', cluster: FAILING }, 0.5);
  await section.getByRole('button', { name: 'Promote' }).click();
  log(`${FAILING} now answers 0.5; promoted`);

  const history = section.getByRole('table', { name: 'Release history' });
  const finished = history.locator(`tr[data-release="${release.id}"]`);
  await finished.getByText('Rolled back').waitFor({ timeout: 180_000 });
  const reason = new RegExp(
    `Analysis success-rate failed on ${FAILING}: 0\\.5 does not meet result\\[0\\] >= 0\\.995`,
  );
  await finished.getByText(reason).waitFor();
  await section.getByText('No release under way.').waitFor({ timeout: 60_000 });

  const ended = await api('GET', `/releases/${release.id}`);
  const states = Object.fromEntries(
    ended.progress.clusters.map(c => [c.cluster, c.state]),
  );
  log(
    `release ${ended.status}: ${
      ended.progress.abort?.message
    }; clusters ${JSON.stringify(states)}`,
  );
  const abort = ended.progress.abort ?? {};
  if (
    ended.status !== 'ROLLED_BACK' ||
    abort.cluster !== FAILING ||
    abort.metric !== 'success-rate' ||
    abort.value !== 0.5 ||
    states['sim-1'] !== 'ROLLED_BACK' ||
    states[FAILING] !== 'ROLLED_BACK' ||
    states['sim-3'] !== 'SKIPPED'
  ) {
    throw new Error(`unexpected end of the release: ${JSON.stringify(ended)}`);
  }

  // Every cluster is back on (or never left) the image it ran before, on the card and in the API.
  const afterwards = await waitFor(
    'payments back on its previous images',
    async () => {
      const deployments = await paymentsDeployments();
      return WAVES.every(
        c =>
          deployments.get(c)?.image === previous[c] &&
          deployments.get(c)?.status === 'DEPLOYED',
      )
        ? deployments
        : undefined;
    },
    120_000,
    1000,
  );
  for (const cluster of WAVES) {
    const tableRow = page.locator(
      `table[aria-label="Deployments"] tr[data-cluster="${cluster}"]`,
    );
    await tableRow.getByText(previous[cluster]).waitFor({ timeout: 60_000 });
    await tableRow.getByLabel('Deployment status: DEPLOYED').waitFor();
    if ((await tableRow.innerText()).includes(NEW_IMAGE))
      throw new Error(`the card still shows ${NEW_IMAGE} on ${cluster}`);
  }
  // The release did reach sim-1 and sim-2 (their API received the new image) and never sim-3.
  for (const cluster of WAVES) {
    const { items: writes } = await simulatorRequest(
      `/clusters/${cluster}/_sim/history`,
    );
    const reached = writes.some(w =>
      JSON.stringify(w.object).includes(NEW_IMAGE),
    );
    if (reached !== (cluster !== 'sim-3')) {
      throw new Error(
        `${cluster} ${reached ? 'received' : 'never received'} ${NEW_IMAGE}`,
      );
    }
  }
  // Nothing of the canary is left running on the clusters.
  for (const cluster of WAVES) {
    const leftovers = (await simulatorObjects(cluster)).filter(
      o =>
        o.metadata?.name === 'payments-canary' ||
        (o.kind === 'Deployment' &&
          o.metadata?.name === 'payments' &&
          o.spec.template.spec.containers[0].image === NEW_IMAGE),
    );
    if (leftovers.length > 0) {
      throw new Error(
        `${cluster} still runs the canary: ${leftovers
          .map(o => `${o.kind}/${o.metadata.name}`)
          .join(', ')}`,
      );
    }
  }
  log(
    'rolled back: every cluster on its previous image',
    JSON.stringify(
      Object.fromEntries(WAVES.map(c => [c, afterwards.get(c).image])),
    ),
  );
  await page
    .getByText('Fleet deployments')
    .first()
    .evaluate(el => el.scrollIntoView({ block: 'start' }));
  await shot(page, 'progressive-rolled-back');
}

let failed = false;
try {
  await main();
  log('PASS');
} catch (error) {
  failed = true;
  console.error('[e2e] FAIL', error);
} finally {
  await browser?.close().catch(() => undefined);
  if (portal?.pid) {
    try {
      process.kill(-portal.pid, 'SIGTERM');
    } catch {}
    await sleep(1500);
    try {
      process.kill(-portal.pid, 'SIGKILL');
    } catch {}
  }
}
if (failed) {
  console.error(
    `[e2e] portal log: ${path.relative(
      root,
      path.join(artifacts, 'portal.log'),
    )}`,
  );
  console.log('0 passed, 1 failed');
  process.exit(1);
}
console.log('1 passed, 0 failed');
