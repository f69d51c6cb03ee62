import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { useSimulator } from '@cnp/kube-simulator';
import { startFleetTestBackend } from '../testBackend';
import { createTestDatabases } from '../testing/databases';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import Ajv2020 from 'ajv/dist/2020';
import type { Router } from 'express';
import request from 'supertest';
import { initialProgress } from '../progressive/releaseMachine';
import { spec } from '../schema/openapi';
import { createRouter, type RouterOptions } from './router';

/*
 * The OpenAPI contract (src/schema/openapi.yaml) against the router: the router serves exactly
 * the operations the spec lists, and every answer of every operation, successes and errors, has a
 * status the operation declares and a body its schema accepts. A route added, removed, renamed or
 * answering differently without the spec changing fails here.
 */

jest.setTimeout(60_000);

type Method = 'get' | 'post' | 'patch' | 'delete' | 'put';
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, ResponseObject> };
};
type ResponseObject = {
  $ref?: string;
  content?: Record<string, { schema: unknown }>;
};
type Operation = {
  operationId: string;
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, ResponseObject>;
};
const doc = spec as unknown as Doc;

/** `/clusters/{name}` → `/clusters/:name`, as express writes it. */
const toExpressPath = (openApiPath: string) =>
  openApiPath.replace(/\{([^}]+)\}/g, ':$1');

const specOperations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.keys(item).map(
    method => `${method.toUpperCase()} ${toExpressPath(path)}`,
  ),
);

function routerOperations(router: Router): string[] {
  return router.stack.flatMap(layer => {
    const route = layer.route as
      | { path: string; methods: Record<string, boolean> }
      | undefined;
    if (!route) return [];
    return Object.keys(route.methods).map(
      method => `${method.toUpperCase()} ${route.path}`,
    );
  });
}

/** The spec path and operation a concrete request path matches. */
function findOperation(method: string, url: string) {
  const pathname = url.split('?')[0];
  for (const [path, item] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const operation = item[method.toLowerCase()];
    if (pattern.test(pathname) && operation) return { path, operation };
  }
  return undefined;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ ...doc, $id: 'fleet' });

const pointer = (...parts: string[]) =>
  parts.map(p => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** What is wrong with an answer by the spec, or undefined when it conforms. */
function contractViolation(
  method: string,
  url: string,
  status: number,
  body: unknown,
): string | undefined {
  const found = findOperation(method, url);
  if (!found) return `${method} ${url}: no such operation in the spec`;
  const { path, operation } = found;
  const declared = operation.responses[String(status)];
  if (!declared) {
    return `${method} ${url}: answered ${status}, which ${
      operation.operationId
    } does not declare (${Object.keys(operation.responses).join(', ')})`;
  }
  // The schema's place in the document: under the operation, or under the shared response.
  let base = `fleet#/${pointer(
    'paths',
    path,
    method.toLowerCase(),
    'responses',
    String(status),
  )}`;
  let response = declared;
  if (declared.$ref) {
    const name = declared.$ref.replace('#/components/responses/', '');
    response = doc.components.responses[name];
    base = `fleet#/${pointer('components', 'responses', name)}`;
  }
  if (!response.content) {
    return body === undefined ||
      body === '' ||
      Object.keys(body as object).length === 0
      ? undefined
      : `${method} ${url}: ${status} has a body, the spec none`;
  }
  const validate = ajv.getSchema(
    `${base}/${pointer('content', 'application/json', 'schema')}`,
  );
  if (!validate) return `${method} ${url}: no schema for ${status}`;
  if (validate(body)) return undefined;
  return `${method} ${url} ${status}: ${ajv.errorsText(
    validate.errors,
  )} in ${JSON.stringify(body).slice(0, 500)}`;
}

/**
 * What is wrong with a request body the API accepted, by the spec: a client typed by the spec must
 * be able to send every request the API takes.
 */
function requestViolation(
  method: string,
  url: string,
  body: unknown,
): string | undefined {
  const found = findOperation(method, url);
  if (!found) return `${method} ${url}: no such operation in the spec`;
  if (body === undefined) return undefined;
  if (!found.operation.requestBody) {
    return `${method} ${url}: sent a body, the spec takes none`;
  }
  const validate = ajv.getSchema(
    `fleet#/${pointer(
      'paths',
      found.path,
      method.toLowerCase(),
      'requestBody',
      'content',
      'application/json',
      'schema',
    )}`,
  );
  if (!validate) return `${method} ${url}: no request schema`;
  return validate(body)
    ? undefined
    : `${method} ${url} request: ${ajv.errorsText(validate.errors)}`;
}

describe('the Fleet API router and its OpenAPI spec', () => {
  it('serves exactly the operations the spec lists', async () => {
    // Only the route table is read: nothing is called.
    const router = (await createRouter(
      {} as RouterOptions,
    )) as unknown as Router;
    const served = routerOperations(router).filter(
      op => op !== 'GET /openapi.json',
    );
    expect([...served].sort()).toEqual([...specOperations].sort());
  });

  it('finds an answer that breaks the contract', () => {
    // The checker itself: an undeclared status, a missing field, an unknown field.
    expect(contractViolation('GET', '/clusters/east', 418, {})).toMatch(
      /does not declare/,
    );
    expect(contractViolation('GET', '/summary', 200, { clusters: {} })).toMatch(
      /must have required property/,
    );
    expect(
      contractViolation('GET', '/health', 200, { status: 'ok', extra: 1 }),
    ).toMatch(/must NOT have additional properties/);
    expect(contractViolation('GET', '/health', 200, { status: 'ok' })).toBe(
      undefined,
    );
    expect(
      requestViolation('POST', '/deployments', { entityRef: 'x', replicas: 2 }),
    ).toMatch(/must have required property 'cluster'/);
  });
});

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'] });

describe.each(databases.eachSupportedId())(
  'Fleet API answers by the OpenAPI spec (%s)',
  databaseId => {
    const running: Array<{ stop(): Promise<void> }> = [];
    afterEach(async () => {
      await Promise.all(running.splice(0).map(b => b.stop()));
    });

    it('answers every operation, successes and errors, as the spec says', async () => {
      const knex = await databases.init(databaseId);
      const started = await startFleetTestBackend({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        // A window that selects none of the clusters: listed, it never makes a release wait.
        fleet: {
          release: {
            freezeWindows: [
              {
                name: 'nights',
                clusterSelector: 'fleet-test=never',
                cron: '0 22 * * *',
                duration: '8h',
                timeZone: 'Europe/Paris',
              },
            ],
          },
        },
      });
      running.push(started.backend);
      const { server, stores } = started;
      await stores.clusters.insertCluster({
        name: 'manual-x',
        endpoint: 'https://10.0.0.8:6443',
        kubeconfigRef: 'vault:x',
        source: 'manual',
      });

      const violations: string[] = [];
      /** Successful (2xx) answers, by operation. */
      const succeeded = new Set<string>();
      async function call(
        method: Method,
        url: string,
        options: {
          body?: object;
          headers?: Record<string, string>;
          expect: number;
        },
      ) {
        let req = request(server)[method](`/api/fleet${url}`);
        for (const [name, value] of Object.entries(options.headers ?? {})) {
          req = req.set(name, value);
        }
        const res = await (options.body ? req.send(options.body) : req);
        expect(`${method} ${url} ${res.status}`).toBe(
          `${method} ${url} ${options.expect}`,
        );
        const violation = contractViolation(method, url, res.status, res.body);
        if (violation) violations.push(violation);
        // A request the API took is one the spec allows.
        const requestProblem =
          res.status < 300
            ? requestViolation(method, url, options.body)
            : undefined;
        if (requestProblem) violations.push(requestProblem);
        const found = findOperation(method, url);
        if (found && res.status < 300) {
          succeeded.add(`${method.toUpperCase()} ${toExpressPath(found.path)}`);
        }
        return res;
      }

      await call('get', '/health', { expect: 200 });
      // The document itself, served for clients and tools, with the plugin's mount point.
      const served = await request(server).get('/api/fleet/openapi.json');
      expect(served.status).toBe(200);
      expect(Object.keys(served.body.paths)).toContain(
        '/api/fleet/clusters/{name}',
      );
      await call('get', '/summary', {
        headers: { Authorization: mockCredentials.none.header() },
        expect: 401,
      });
      await call('post', '/health/run', { expect: 200 });
      await call('get', '/summary', { expect: 200 });
      await call('get', '/events?limit=5', { expect: 200 });
      await call('get', '/events?limit=0', { expect: 400 });
      await call('get', '/freeze-windows', { expect: 200 });
      await call('get', '/analysis-providers', { expect: 200 });
      await call('get', '/deployment-counts', { expect: 200 });

      await call('get', '/clusters?status=ONLINE&limit=1', { expect: 200 });
      await call('get', '/clusters?limit=zero', { expect: 400 });
      await call('get', '/clusters/east', { expect: 200 });
      await call('get', '/clusters/nowhere', { expect: 404 });
      await call('get', '/clusters/east/events', { expect: 200 });
      await call('get', '/clusters/nowhere/events', { expect: 404 });
      await call('post', '/clusters', {
        body: {
          name: 'new-one',
          endpoint: 'https://10.0.0.9:6443',
          kubeconfigRef: 'vault:new-one',
          labels: { env: 'dev' },
        },
        expect: 201,
      });
      await call('post', '/clusters', {
        body: {
          name: 'new-one',
          endpoint: 'https://10.0.0.10:6443',
          kubeconfigRef: 'vault:again',
        },
        expect: 409,
      });
      await call('post', '/clusters', {
        body: { name: 'Not A Name', endpoint: 'ftp://x', kubeconfigRef: '' },
        expect: 400,
      });
      await call('post', '/clusters', {
        body: { name: 'big', labels: { a: 'x'.repeat(70_000) } },
        expect: 413,
      });
      await call('patch', '/clusters/east', {
        body: { labels: { env: 'prod' }, failureThreshold: 3 },
        expect: 200,
      });
      await call('patch', '/clusters/east', {
        body: { failureThreshold: 0 },
        expect: 400,
      });
      await call('patch', '/clusters/nowhere', {
        body: { labels: {} },
        expect: 404,
      });
      await call('delete', '/clusters/east', { expect: 409 });
      await call('delete', '/clusters/manual-x', { expect: 204 });
      await call('delete', '/clusters/manual-x', { expect: 404 });

      const application = await call('post', '/applications', {
        body: {
          entityRef: 'component:default/payments',
          spec: { image: 'nginx:1.27', env: { LOG_LEVEL: 'debug' } },
        },
        expect: 201,
      });
      const applicationId: string = application.body.id;
      await call('post', '/applications', {
        body: {
          entityRef: 'component:default/payments',
          spec: { image: 'nginx:1.27' },
        },
        expect: 409,
      });
      await call('post', '/applications', {
        body: { entityRef: 'component:default/x', spec: { replicas: -1 } },
        expect: 400,
      });
      await call('get', '/applications?entityRef=component:default/payments', {
        expect: 200,
      });
      await call('get', `/applications/${applicationId}`, { expect: 200 });
      await call('get', '/applications/6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b99', {
        expect: 404,
      });
      await call('patch', `/applications/${applicationId}`, {
        body: { spec: { image: 'nginx:1.27', replicas: 2 } },
        expect: 200,
      });
      await call('patch', `/applications/${applicationId}`, {
        body: { spec: { image: 'nginx:1.27' } },
        headers: { 'If-Match': '"999"' },
        expect: 412,
      });

      const deployment = await call('post', '/deployments', {
        body: { entityRef: 'component:default/payments', cluster: 'east' },
        expect: 201,
      });
      const deploymentId: string = deployment.body.id;
      await call('post', '/deployments', {
        body: { entityRef: 'component:default/payments', cluster: 'nowhere' },
        expect: 404,
      });
      await call('post', '/deployments', {
        body: { entityRef: 'component:default/payments' },
        expect: 400,
      });
      await call('get', '/deployments?cluster=east', { expect: 200 });
      await call('get', `/deployments/${deploymentId}`, { expect: 200 });
      await call('get', `/deployments/${deploymentId}/events`, {
        expect: 200,
      });
      await call('get', `/deployments/${deploymentId}/revisions`, {
        expect: 200,
      });
      await call('get', `/applications/${applicationId}/status`, {
        expect: 200,
      });
      await call('post', `/deployments/${deploymentId}/rollback`, {
        body: { toRevision: 99 },
        expect: 404,
      });
      const preview = await call(
        'post',
        `/applications/${applicationId}/preview`,
        { body: { image: 'nginx:1.28', clusters: ['east'] }, expect: 200 },
      );
      expect(preview.body.clusters[0]).toMatchObject({
        cluster: 'east',
        status: 'previewed',
      });
      await call('post', `/applications/${applicationId}/preview`, {
        body: { version: '../main' },
        expect: 400,
      });

      const release = await call(
        'post',
        `/applications/${applicationId}/releases`,
        { body: { image: 'nginx:1.28', clusters: ['east'] }, expect: 201 },
      );
      await call('post', `/applications/${applicationId}/releases`, {
        body: { clusters: [] },
        expect: 400,
      });
      await call('get', `/applications/${applicationId}/releases`, {
        expect: 200,
      });
      await call('get', `/releases/${release.body.id}`, { expect: 200 });
      // Stages: east is staging, west is prod, which takes only what staging verified.
      await call('patch', `/applications/${applicationId}`, {
        body: {
          spec: {
            stages: [
              { name: 'staging', clusters: ['east'] },
              {
                name: 'prod',
                clusters: ['west'],
                requires: { stage: 'staging', soak: '1d' },
              },
            ],
          },
        },
        expect: 200,
      });
      const stages = await call(
        'get',
        `/applications/${applicationId}/stages`,
        {
          expect: 200,
        },
      );
      expect(stages.body.items.map((s: { name: string }) => s.name)).toEqual([
        'staging',
        'prod',
      ]);
      await call(
        'get',
        '/applications/6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b99/stages',
        { expect: 404 },
      );
      await call('post', `/applications/${applicationId}/releases`, {
        body: { stage: 'prod' },
        expect: 409,
      });
      await call('post', `/applications/${applicationId}/releases`, {
        body: { stage: 'qa' },
        expect: 400,
      });
      await call('post', `/deployments/${deploymentId}/rollback`, {
        body: { toRevision: 1 },
        expect: 201,
      });

      // Releases waiting before they start: listed, approved (inside a freeze window, with an
      // override: it starts at once), rejected.
      const waitingGate = {
        approvals: null,
        decisions: [],
        window: { name: 'friday', clusters: ['east'], closesAt: null },
        openedAt: null,
        openedBy: null,
      };
      for (const id of [
        '6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b21',
        '6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b22',
      ]) {
        await stores.releases.insertRelease({
          id,
          applicationId,
          createdBy: 'user:default/someone-else',
          request: { image: 'nginx:1.29', clusters: ['east'] },
          phase: 'WAITING_FOR_WINDOW',
          gate: waitingGate,
          targets: [],
          skipped: [],
        });
      }
      const waiting = await call('get', '/releases?status=WAITING_FOR_WINDOW', {
        expect: 200,
      });
      expect(waiting.body.items).toHaveLength(2);
      await call('get', '/releases?status=DONE', { expect: 400 });
      await call('get', '/releases?status=PROGRESSING,DONE', { expect: 400 });
      // The releases under way, asked by their statuses: the waiting ones are not among them.
      await stores.releases.insertRelease({
        id: '6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b23',
        applicationId,
        createdBy: 'user:default/someone-else',
        request: { image: 'nginx:1.29', clusters: ['east'] },
        phase: 'PAUSED',
        strategy: {
          waves: [{ clusters: ['east'] }],
          canary: { steps: [{ setWeight: 20 }, { pause: {} }] },
        },
        progress: {
          phase: 'PAUSED',
          currentWave: 0,
          waves: [['east']],
          clusters: [],
          analysis: [],
          updatedAt: new Date().toISOString(),
        },
        targets: [],
        skipped: [],
      });
      const underWay = await call(
        'get',
        '/releases?status=PROGRESSING,PAUSED,ABORTING',
        { expect: 200 },
      );
      expect(
        underWay.body.items.map((r: { id: string; status: string }) => [
          r.id,
          r.status,
        ]),
      ).toEqual([['6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b23', 'PAUSED']]);
      const both = await call(
        'get',
        '/releases?status=WAITING_FOR_WINDOW,PAUSED',
        { expect: 200 },
      );
      expect(both.body.items).toHaveLength(3);
      // Ended, so that it holds nothing of the component for what follows.
      expect(
        await stores.releases.updateRelease(
          '6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b23',
          0,
          { phase: 'ROLLED_BACK' },
        ),
      ).toBe(true);
      await call(
        'post',
        '/releases/6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b21/approve',
        {
          body: { comment: 'no window yet' },
          expect: 409,
        },
      );
      await call(
        'post',
        '/releases/6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b21/approve',
        {
          body: { overrideFreeze: 'yes' },
          expect: 400,
        },
      );
      await call(
        'post',
        '/releases/6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b21/approve',
        {
          body: { comment: 'hotfix', overrideFreeze: true },
          expect: 200,
        },
      );
      await call(
        'post',
        '/releases/6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b22/reject',
        {
          body: { comment: 'not this week' },
          expect: 200,
        },
      );
      await call(
        'post',
        '/releases/6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b22/reject',
        {
          expect: 409,
        },
      );
      await call(
        'post',
        '/releases/6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b98/approve',
        {
          expect: 404,
        },
      );

      // A progressive release waiting at a pause: every steering action applies.
      const progressive = await stores.releases.insertRelease({
        id: '6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b11',
        applicationId,
        createdBy: 'test',
        request: { image: 'nginx:1.29' },
        strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
        phase: 'PROGRESSING',
        progress: {
          ...initialProgress([['east']], new Date()),
          clusters: [
            {
              cluster: 'east',
              wave: 0,
              state: 'RUNNING',
              stepIndex: 1,
              weight: 50,
              awaitingPromote: true,
              failures: 0,
              inconclusive: 0,
            },
          ],
        },
        targets: [],
        skipped: [],
      });
      await call('post', `/releases/${progressive.id}/pause`, { expect: 200 });
      await call('post', `/releases/${progressive.id}/resume`, {
        expect: 200,
      });
      await call('post', `/releases/${progressive.id}/promote`, {
        expect: 200,
      });
      await call('post', `/releases/${progressive.id}/abort`, { expect: 200 });
      await call('post', `/releases/${progressive.id}/promote`, {
        expect: 409,
      });
      await call('get', '/releases/6f1c2b9e-0d4a-4e8b-9a53-2f7c1d0e4b98', {
        expect: 404,
      });

      await call('delete', `/deployments/${deploymentId}?force=maybe`, {
        expect: 400,
      });
      await call('delete', `/deployments/${deploymentId}?force=true`, {
        expect: 202,
      });
      await call('delete', `/applications/${applicationId}`, { expect: 202 });

      // Denied: 403 is declared where the route checks a permission.
      const denied = await startFleetTestBackend({
        knex: await databases.init(databaseId),
        kubeconfigDir: sim.kubeconfigDir,
        features: [
          mockServices.permissions.factory({
            result: AuthorizeResult.DENY,
          }),
        ],
      });
      running.push(denied.backend);
      const deniedRes = await request(denied.server)
        .post('/api/fleet/health/run')
        .send();
      expect(deniedRes.status).toBe(403);
      const deniedViolation = contractViolation(
        'POST',
        '/health/run',
        deniedRes.status,
        deniedRes.body,
      );
      if (deniedViolation) violations.push(deniedViolation);

      expect(violations).toEqual([]);
      // Every operation answered successfully at least once above.
      expect([...succeeded].sort()).toEqual([...specOperations].sort());
    });
  },
);
