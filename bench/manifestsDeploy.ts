/*
 * The whole deploy path for bench/manifests.ts: `DeploymentService.deploy()` of the shop's 50
 * objects, read from a Git repository served over Git's smart HTTP (`@cnp/git-host`) through
 * Backstage's URL reader, and of the generated workload, on every cluster; then one
 * `DeploymentService.preview()` of the shop's next version (a branch) over every cluster, as
 * the preview route asks it. The service is wired as `plugin.ts` wires it (manifest reader,
 * object applier, manifest applier, remover), without the project rules (every namespace and
 * kind allowed) and on an in-memory SQLite database.
 *
 * A deploy() call's time includes the manifests' Git read (each deploy reads them; the reader
 * fetches the repository into its mirror on every read, one read of a repository at a time),
 * the render, the database writes (PENDING, revision with its objects, PROGRESSING) and the
 * apply; it ends when the deployment is PROGRESSING. The rollout's follow-up is not run (see
 * below).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pLimit from 'p-limit';
import { stringify } from 'yaml';
import { ConfigReader } from '@backstage/config';
import { UrlReaders } from '@backstage/backend-defaults/urlReader';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { createFleet } from '@cnp/fleet-harness';
import { ms, percentile } from '@cnp/fleet-harness';
import {
  createExampleRepository,
  createGitHostReaderFactory,
  serveGitRepositories,
} from '@cnp/git-host';
import {
  DeploymentService,
  ManifestApplier,
  ManifestRemover,
  readFleetConfig,
} from './lib/releaseParts';
import { ManifestReader, ObjectSetApplier } from './lib/manifestParts';

type Fleet = Awaited<ReturnType<typeof createFleet>>;
type Cluster = Awaited<
  ReturnType<Fleet['stores']['clusters']['listClusters']>
>[number];

const ACTOR = 'user:default/bench';

export interface DeployPhase {
  phase: string;
  workload: 'manifests' | 'generated';
  p50: number;
  p95: number;
  max: number;
  wallMs: number;
}

export interface DeployRoundResult {
  concurrency: number;
  namespace: string;
  phases: DeployPhase[];
  /** One preview() of every cluster: wall time, and what it answered. */
  previews: Array<{
    workload: 'manifests' | 'generated';
    wallMs: number;
    actions: Record<string, number>;
  }>;
}

function yamlOf(objects: KubernetesObject[]): string {
  return objects.map(o => stringify(o)).join('---\n');
}

export async function deployRound(options: {
  fleet: Fleet;
  clusters: Cluster[];
  concurrency: number;
  /** The shop's objects as the repository holds them: main, and the branch `next`. */
  manifests: { main: KubernetesObject[]; next: KubernetesObject[] };
  log: (line: string) => void;
}): Promise<DeployRoundResult> {
  const { fleet, clusters, concurrency, log } = options;
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'fleet-bench-git-'));
  const root = path.join(tmp, 'git');
  await createExampleRepository({
    root,
    name: 'shop',
    message: 'The shop, 50 objects',
    files: { 'deploy/shop.yaml': yamlOf(options.manifests.main) },
  });
  await createExampleRepository({
    root,
    name: 'shop',
    branch: 'next',
    message: 'The next version: 5 objects changed, 1 dropped',
    files: { 'deploy/shop.yaml': yamlOf(options.manifests.next) },
  });
  const git = await serveGitRepositories({ root });
  // Each round with entities and a namespace of its own.
  const namespace = `deploy-c${concurrency}`;
  const SHOP = `component:default/shop-repo-c${concurrency}`;
  const STOREFRONT = `component:default/storefront-c${concurrency}`;
  const config = readFleetConfig(new ConfigReader({}), {});
  const urlReader = UrlReaders.create({
    config: new ConfigReader({}),
    logger: fleet.logger,
    factories: [
      createGitHostReaderFactory({
        baseUrl: git.url,
        cacheDir: path.join(tmp, 'cache'),
      }),
    ],
  });
  const annotations: Record<string, Record<string, string>> = {
    [SHOP]: {
      'backstage.io/source-location': `url:${git.url}/shop.git/tree/main/`,
      'cnp.io/manifests-ref': 'dir:./deploy',
    },
    [STOREFRONT]: {},
  };
  const deployments = DeploymentService.create({
    stores: fleet.stores,
    applier: ManifestApplier.create({ clients: fleet.clients }),
    objectApplier: ObjectSetApplier.create({ clients: fleet.clients }),
    manifestReader: new ManifestReader(urlReader),
    remover: ManifestRemover.create({ clients: fleet.clients }),
    logger: fleet.logger,
    deploy: { ...config.deploy, namespace },
    annotationsOf: async entityRef => annotations[entityRef] ?? {},
  });
  // No rollout is followed: the follow-up is not measured, and the simulator's
  // HorizontalPodAutoscalers carry no conditions (Fleet's health of an HPA stays "Waiting to
  // Autoscale"), so the shop's deployments would stay PROGRESSING and be polled, 50 reads each
  // every 2 s, through every later phase. Each deploy() still ends PROGRESSING, as it would.
  await deployments.stop();
  const result: DeployRoundResult = {
    concurrency,
    namespace,
    phases: [],
    previews: [],
  };
  try {
    const deployAll = async (
      phase: string,
      workload: 'manifests' | 'generated',
    ) => {
      const limit = pLimit(concurrency);
      const started = performance.now();
      const answers = await Promise.all(
        clusters.map(cluster =>
          limit(async () => {
            const t = performance.now();
            const d = await deployments.deploy(
              workload === 'manifests'
                ? { entityRef: SHOP, cluster: cluster.name }
                : {
                    entityRef: STOREFRONT,
                    cluster: cluster.name,
                    image: 'registry.example/storefront:1.0.0',
                    replicas: 3,
                  },
              ACTOR,
            );
            return { d, ms: performance.now() - t };
          }),
        ),
      );
      const wallMs = performance.now() - started;
      const failed = answers.filter(a => a.d.status === 'FAILED');
      if (failed.length)
        throw new Error(
          `${failed.length} deploys of the ${workload} FAILED, e.g. ${failed[0].d.cluster}: ${failed[0].d.message}`,
        );
      const times = answers.map(a => a.ms);
      const p: DeployPhase = {
        phase,
        workload,
        p50: percentile(times, 50),
        p95: percentile(times, 95),
        max: Math.max(...times),
        wallMs,
      };
      result.phases.push(p);
      log(
        `    ${`deploy(), ${phase}, ${workload}`.padEnd(50)} p50 ${ms(
          p.p50,
        ).padStart(7)}  p95 ${ms(p.p95).padStart(7)}  max ${ms(p.max).padStart(
          7,
        )}  all ${ms(p.wallMs).padStart(7)}`,
      );
    };
    log(
      `  the whole deploy path, ${concurrency} cluster${
        concurrency === 1 ? '' : 's'
      } at a time (namespace ${namespace}; manifests read from ${
        git.url
      }/shop.git):`,
    );
    const phases = ['first (creates)', 'second, unchanged', 'third, unchanged'];
    for (const phase of phases) {
      await deployAll(phase, 'manifests');
      await deployAll(phase, 'generated');
    }

    // One preview of every cluster, as the preview route asks it.
    for (const workload of ['manifests', 'generated'] as const) {
      const application =
        (await fleet.stores.applications.getApplicationByEntityRef(
          workload === 'manifests' ? SHOP : STOREFRONT,
        ))!;
      const records = await Promise.all(
        clusters.map(c => fleet.stores.clusters.getCluster(c.name)),
      );
      const started = performance.now();
      const preview = await deployments.preview({
        application,
        clusters: records.map(r => r!),
        request:
          workload === 'manifests'
            ? { version: 'next' }
            : { image: 'registry.example/storefront:1.1.0' },
      });
      const wallMs = performance.now() - started;
      const actions: Record<string, number> = {};
      for (const c of preview.clusters) {
        if (c.status !== 'previewed')
          throw new Error(`preview of ${c.cluster}: ${c.status}: ${c.message}`);
        for (const o of c.objects)
          actions[o.action] = (actions[o.action] ?? 0) + 1;
      }
      result.previews.push({ workload, wallMs, actions });
      log(
        `    preview() of the next version on all ${
          clusters.length
        } clusters (8 at a time), ${workload}: ${ms(wallMs)} (${Object.entries(
          actions,
        )
          .map(([k, v]) => `${v} ${k}`)
          .join(', ')})`,
      );
    }
    return result;
  } finally {
    await deployments.stop();
    await git.close();
    await fs.rm(tmp, { recursive: true, force: true });
  }
}
