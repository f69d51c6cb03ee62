import { ConflictError } from '@backstage/errors';
import type { Application } from '@cnp/plugin-fleet-common';
import { randomUUID } from 'node:crypto';
import { assertNoRunningRelease } from '../deploy/runningRelease';
import {
  ignoresReplicas,
  type DeploymentService,
} from '../deploy/DeploymentService';
import type {
  ClusterRecord,
  DeploymentStore,
  NewEvent,
  ReleaseChange,
  ReleaseRecord,
  ReleaseStore,
} from '../database/types';
import { asError } from '../util/errors';
import { initialProgress, Transition } from './releaseMachine';
import { releasedWhat } from './releasedWhat';
import { resolveWaves } from './strategy';
import type { ReleaseRequest } from './ReleaseService';

/*
 * Starting a release, once nothing holds it back: at once when it waits for nothing, or when its
 * gate opens (an approval, a freeze window that closed). A release that waited is its stored
 * record, started in place; the others are inserted as they start.
 */

export interface StartDeps {
  stores: {
    deployments: Pick<DeploymentStore, 'getDeploymentFor'>;
    releases: ReleaseStore;
  };
  deployments: Pick<DeploymentService, 'deploy'>;
}

/** A release that waited before it started: its record, its opened gate and their events. */
export interface OpenedRelease {
  record: ReleaseRecord;
  change: Pick<ReleaseChange, 'gate'>;
  events: NewEvent[];
}

/** What is kept of a request on the release's record. */
export function recordedRequest(
  request: ReleaseRequest,
  clusters?: string[],
): ReleaseRecord['request'] {
  return {
    image: request.image,
    replicas: request.replicas,
    env: request.env,
    version: request.version,
    ...(clusters ? { clusters } : {}),
  };
}

/**
 * Refuses, before anything is stored, a release with a strategy that cannot run: one whose
 * component leaves its replica count to someone else, or one with a cluster the component does
 * not run on yet (the canary starts from what each cluster runs). OFFLINE clusters are left to
 * the start, which skips them.
 */
export async function assertProgressiveCanStart(
  deps: StartDeps,
  application: Application,
  clusters: ClusterRecord[],
): Promise<void> {
  if (ignoresReplicas(application)) {
    throw new ConflictError(
      `'${application.entityRef}' leaves its replica count to someone else (ignoreDifferences lists /spec/replicas): a canary sized by replicas cannot run; release it without a strategy`,
    );
  }
  for (const cluster of clusters) {
    if (cluster.status === 'OFFLINE') continue;
    const deployment = await deps.stores.deployments.getDeploymentFor(
      application.id,
      cluster.name,
    );
    if (!deployment || deployment.status === 'REMOVING') {
      throw new ConflictError(
        `A release with a strategy starts from what each cluster runs, and '${application.entityRef}' has no deployment on '${cluster.name}': deploy it there first, or leave it out of 'clusters'`,
      );
    }
  }
}

/**
 * A release without a strategy: one new revision on every cluster now, through the same deploy
 * flow as a deploy to one cluster. OFFLINE clusters, and those a deploy refuses, are skipped.
 * Answers the release's id.
 */
export async function startImmediate(
  deps: StartDeps,
  application: Application,
  clusters: ClusterRecord[],
  request: ReleaseRequest,
  actor: string,
  waited?: OpenedRelease,
): Promise<string> {
  const { stores, deployments } = deps;
  // An immediate release would overwrite what a running canary is doing on every cluster.
  await assertNoRunningRelease(
    stores.releases,
    application,
    'an immediate release',
  );
  if (waited) {
    // Claimed first, so that two openings of one gate never deploy twice.
    const claimed = await stores.releases.updateRelease(
      waited.record.id,
      waited.record.version,
      { ...waited.change, phase: 'STARTING' },
      waited.events,
    );
    if (!claimed) throw changing(waited.record.id);
  }
  const targets: ReleaseRecord['targets'] = [];
  const skipped: ReleaseRecord['skipped'] = [];
  for (const cluster of clusters) {
    const name = cluster.name;
    if (cluster.status === 'OFFLINE') {
      skipped.push({ cluster: name, reason: 'cluster is OFFLINE' });
      continue;
    }
    try {
      const deployment = await deployments.deploy(
        {
          entityRef: application.entityRef,
          cluster: name,
          image: request.image,
          replicas: request.replicas,
          env: request.env,
          version: request.version,
          cause: 'release',
        },
        actor,
      );
      targets.push({
        cluster: name,
        deploymentId: deployment.id,
        revision: deployment.revision,
      });
    } catch (error) {
      skipped.push({ cluster: name, reason: asError(error).message });
    }
  }
  if (waited) {
    const id = waited.record.id;
    await stores.releases.updateRelease(id, waited.record.version + 1, {
      phase: null,
      targets,
      skipped,
    });
    return id;
  }
  const record = await stores.releases.insertRelease({
    id: randomUUID(),
    applicationId: application.id,
    createdBy: actor,
    request: recordedRequest(request),
    stage: request.stage,
    targets,
    skipped,
  });
  return record.id;
}

/**
 * A release with a strategy: nothing is applied now. The targets are split into waves and the
 * release is stored PROGRESSING; the release task runs the waves. Each target needs a running
 * deployment (the canary starts from what it runs); OFFLINE clusters are skipped and listed.
 * Answers the release's id.
 */
export async function startProgressive(
  deps: StartDeps,
  application: Application,
  clusters: ClusterRecord[],
  request: ReleaseRequest,
  actor: string,
  waited?: OpenedRelease,
): Promise<string> {
  const { stores } = deps;
  const strategy = request.strategy!;
  await assertProgressiveCanStart(deps, application, clusters);
  const skipped: ReleaseRecord['skipped'] = clusters
    .filter(c => c.status === 'OFFLINE')
    .map(c => ({ cluster: c.name, reason: 'cluster is OFFLINE' }));
  const usable = clusters.filter(c => c.status !== 'OFFLINE');
  if (usable.length === 0) {
    throw new ConflictError(
      `No target of this release is reachable: ${skipped
        .map(s => s.cluster)
        .join(', ')} ${skipped.length === 1 ? 'is' : 'are'} OFFLINE`,
    );
  }
  const running = (await stores.releases.listReleases(application.id)).find(
    r => r.phase && ['PROGRESSING', 'PAUSED', 'ABORTING'].includes(r.phase),
  );
  if (running) {
    throw new ConflictError(
      `Release '${running.id}' of '${application.entityRef}' is still ${running.phase}: abort it or wait for it to end`,
    );
  }
  const waves = resolveWaves(
    strategy.waves,
    usable.map(c => ({ name: c.name, labels: c.labels })),
    skipped.map(x => x.cluster),
  );
  // The release's first events: who started it, and its first wave.
  const id = waited?.record.id ?? randomUUID();
  const t = new Transition(
    id,
    structuredClone(
      waited?.record.progress ?? initialProgress(waves, new Date()),
    ),
    Date.now(),
  );
  t.event(
    'CREATED',
    `Release of ${releasedWhat(request)} started by ${actor}: ${
      waves.length
    } wave${waves.length === 1 ? '' : 's'} over ${usable.length} cluster${
      usable.length === 1 ? '' : 's'
    }${
      skipped.length
        ? `; skipped ${skipped.map(x => x.cluster).join(', ')}`
        : ''
    }`,
    { actor },
  );
  t.event(
    'WAVE_STARTED',
    `Wave 1 of ${waves.length} started: ${waves[0].join(', ')}`,
    { actor },
  );
  if (!waited) {
    // Stored PROGRESSING with its first events in one write: the release task may take it up at
    // once, and a second write here would race the task's first steps.
    await stores.releases.insertRelease(
      {
        id,
        applicationId: application.id,
        createdBy: actor,
        request: recordedRequest(request),
        strategy,
        stage: request.stage,
        phase: 'PROGRESSING',
        progress: t.progress,
        targets: [],
        skipped,
      },
      t.events,
    );
    return id;
  }
  const written = await stores.releases.updateRelease(
    id,
    waited.record.version,
    {
      ...waited.change,
      phase: t.progress.phase,
      progress: t.progress,
      skipped,
    },
    [...waited.events, ...t.events],
  );
  if (!written) throw changing(id);
  return id;
}

function changing(id: string): ConflictError {
  return new ConflictError(
    `Release '${id}' changed while it was being started: read it again`,
  );
}
