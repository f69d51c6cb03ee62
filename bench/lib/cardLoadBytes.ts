/*
 * What one load of the entity deployments card downloads: the requests the card's own code
 * makes (FleetClient and the card's loader, from plugins/fleet), through a fetch that counts
 * each answer's bytes. "before" is the request set of the card until it asked for its clusters
 * by name (its deployments and the whole GET /clusters list, then its releases); "after" is the
 * card's loader now. Both against the same backend, so that the difference is the request set.
 */
import { gzipSync } from 'node:zlib';
import { FleetClient } from '../../plugins/fleet/src/api/FleetClient';
import { loadDeploymentsCard } from '../../plugins/fleet/src/components/EntityFleetDeploymentsCard/loadDeploymentsCard';
import { loadReleases } from '../../plugins/fleet/src/components/ReleasePanel/loadReleases';

export interface CardLoadBytes {
  /** Requests one card load made. */
  requests: number;
  /** Sum of the answers' JSON bodies, bytes. */
  bodyBytes: number;
  /** Sum of the same bodies gzipped (what a browser asking for gzip downloads, about). */
  gzipBytes: number;
  /** Each request: path and query (names shortened), body bytes. */
  each: Array<{ request: string; bodyBytes: number }>;
}

export interface CardBytesResult {
  entityRef: string;
  /** Clusters the card shows (those it is deployed to; the bench's entities name none). */
  shownClusters: number;
  before: CardLoadBytes;
  after: CardLoadBytes;
}

function counting(base: string, token: string) {
  const seen: CardLoadBytes = {
    requests: 0,
    bodyBytes: 0,
    gzipBytes: 0,
    each: [],
  };
  const client = new FleetClient({
    discoveryApi: { getBaseUrl: async () => base },
    fetchApi: {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        const res = await fetch(input, {
          ...init,
          headers: { ...init?.headers, Authorization: `Bearer ${token}` },
        });
        const body = Buffer.from(await res.arrayBuffer());
        const url = new URL(String(input));
        const names = url.searchParams.getAll('name').length;
        url.searchParams.delete('name');
        seen.requests += 1;
        seen.bodyBytes += body.length;
        seen.gzipBytes += gzipSync(body).length;
        seen.each.push({
          request: `${url.pathname.replace(/^.*\/api\/fleet/, '')}${
            url.search
          }${names ? ` + ${names} × name=` : ''}`,
          bodyBytes: body.length,
        });
        return new Response(body, {
          status: res.status,
          headers: res.headers,
        });
      },
    },
  });
  return { client, seen };
}

/** One card load of `entityRef`, the old request set and the card's now. */
export async function measureCardLoadBytes(options: {
  /** `http://host:port/api/fleet` */
  base: string;
  token: string;
  entityRef: string;
}): Promise<CardBytesResult> {
  const { base, token, entityRef } = options;
  const old = counting(base, token);
  const [deployments] = await Promise.all([
    old.client.listDeployments({ entityRef }),
    old.client.listClusters(),
  ]);
  await loadReleases(old.client, entityRef, deployments);
  const now = counting(base, token);
  const card = await loadDeploymentsCard(now.client, { entityRef, named: [] });
  return {
    entityRef,
    shownClusters: card.clusters.length,
    before: old.seen,
    after: now.seen,
  };
}

/** The figures as the bench prints them. */
export function cardBytesLines(result: CardBytesResult): string[] {
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  const line = (label: string, load: CardLoadBytes) =>
    `    ${label}: ${load.requests} requests, ${kib(load.bodyBytes)} of JSON (${
      load.bodyBytes
    } bytes), ${kib(load.gzipBytes)} gzipped — ${load.each
      .map(e => `${e.request} ${kib(e.bodyBytes)}`)
      .join('; ')}`;
  return [
    `  bytes per card load of ${result.entityRef} (${result.shownClusters} clusters shown):`,
    line(
      'before (deployments + the whole GET /clusters list + releases)',
      result.before,
    ),
    line(
      'after (deployments + GET /clusters?name= of its clusters + releases)',
      result.after,
    ),
  ];
}
