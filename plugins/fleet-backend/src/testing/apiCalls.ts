import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * Calls of a started Fleet backend's API that tests of the whole plugin share.
 */

/** One call of the API of a started backend, over HTTP; throws unless it answers `expected`. */
async function call(
  server: Server,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  expected = 200,
) {
  const { port } = server.address() as AddressInfo;
  const response = await fetch(`http://localhost:${port}/api/fleet${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expected) {
    throw new Error(
      `${method} ${path} answered ${response.status}, not ${expected}: ${text}`,
    );
  }
  return JSON.parse(text);
}

/**
 * Reads until `ok` holds, every 50 ms and at most `tries` times; answers the value that held, or
 * throws with the last value read.
 */
export async function waitUntil<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  tries = 600,
): Promise<T> {
  let value = await read();
  for (let i = 0; i < tries && !ok(value); i++) {
    await new Promise(r => setTimeout(r, 50));
    value = await read();
  }
  if (!ok(value)) throw new Error(`never got there: ${JSON.stringify(value)}`);
  return value;
}

/**
 * Deploys `entityRef` by hand to each of `clusters` (after a health cycle, so that they are
 * ONLINE), waits until each deployment is DEPLOYED, and answers the application as the API
 * lists it.
 */
export async function deployedApplication(
  server: Server,
  deploy: {
    entityRef: string;
    image: string;
    clusters: string[];
    replicas?: number;
    tries?: number;
  },
): Promise<{ id: string }> {
  const { entityRef, image, clusters, replicas } = deploy;
  await call(server, 'POST', '/health/run');
  for (const cluster of clusters) {
    await call(
      server,
      'POST',
      '/deployments',
      { entityRef, cluster, image, replicas },
      201,
    );
  }
  await waitUntil(
    async () =>
      (
        await call(server, 'GET', `/deployments?entityRef=${entityRef}`)
      ).items,
    (items: Array<{ status: string }>) =>
      items.length === clusters.length &&
      items.every(d => d.status === 'DEPLOYED'),
    deploy.tries,
  );
  const { items } = await call(
    server,
    'GET',
    `/applications?entityRef=${entityRef}`,
  );
  return items[0];
}
