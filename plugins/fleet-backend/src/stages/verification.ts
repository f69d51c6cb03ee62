import type {
  ClusterSelector,
  Deployment,
  Revision,
} from '@cnp/plugin-fleet-common';
import {
  matchesSelector,
  parseLabelSelector,
} from '../kubernetes/labelSelector';
import type { ReleaseRecord } from '../database/types';
import { soakMs, type Stage } from './stageRules';

/*
 * Stages and verified versions, as pure rules over what the stores hold (no clock of their own:
 * each takes `now`). A stage verified version V when every cluster of it has a DEPLOYED
 * deployment whose current revision runs V, and the newest release that brought those revisions
 * ended COMPLETED; since the latest outcome among those revisions.
 */

/** A known cluster: its name and labels, for a stage's selector. */
export interface KnownCluster {
  name: string;
  labels: Record<string, string>;
}

/** What one cluster of the application runs: its deployment and the deployment's current revision. */
export interface ClusterRun {
  deployment: Pick<Deployment, 'id' | 'cluster' | 'status' | 'revision'>;
  revision?: Pick<
    Revision,
    'deploymentId' | 'revision' | 'image' | 'cause' | 'outcomeAt' | 'source'
  >;
}

/** A release of the application, and whether it ended COMPLETED. */
export interface StageRelease {
  record: Pick<ReleaseRecord, 'id' | 'createdAt' | 'targets'>;
  /**
   * With a strategy: its phase is COMPLETED; without: every one of its targets reached DEPLOYED.
   */
  completed: boolean;
}

/**
 * The version a revision runs: its image for Fleet's generated workload; for a component's own
 * manifests, the commit its source resolved to (else the version asked for).
 */
export function versionOf(
  revision: ClusterRun['revision'],
): string | undefined {
  if (!revision) return undefined;
  if (revision.source)
    return revision.source.commit ?? revision.source.version ?? undefined;
  return revision.image;
}

/** Whether a release's requested version (an image, or a manifests version) is the revision's. */
export function runsRequested(
  revision: ClusterRun['revision'],
  requested: string,
): boolean {
  if (!revision) return false;
  if (revision.source) {
    return (
      revision.source.commit === requested ||
      revision.source.version === requested
    );
  }
  return revision.image === requested;
}

function selectorOf(stage: Stage): ClusterSelector | undefined {
  const selector = stage.clusterSelector;
  if (selector === undefined) return undefined;
  return typeof selector === 'string' ? parseLabelSelector(selector) : selector;
}

/** Each stage's clusters: its named ones, or the known clusters its selector matches, by name. */
export function stageClusters(
  stages: readonly Stage[],
  known: readonly KnownCluster[],
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const stage of stages) {
    if (stage.clusters) {
      out.set(stage.name, [...new Set(stage.clusters)].sort());
      continue;
    }
    const selector = selectorOf(stage);
    out.set(
      stage.name,
      selector
        ? known
            .filter(c => matchesSelector(c.labels, selector))
            .map(c => c.name)
            .sort()
        : [],
    );
  }
  return out;
}

/** The clusters two or more stages hold (a selector can pick a named one), with their stages. */
export function sharedClusters(
  clusters: Map<string, string[]>,
): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const [stage, names] of clusters) {
    for (const name of names)
      owners.set(name, [...(owners.get(name) ?? []), stage]);
  }
  return new Map([...owners].filter(([, stages]) => stages.length > 1));
}

/** The version a stage verified, with the revisions that verified it. */
export interface Verified {
  version: string;
  /** The latest outcome among the stage's clusters' current revisions. */
  since: Date;
  /** The current revision of each cluster of the stage, all of them running `version`. */
  revisions: Array<NonNullable<ClusterRun['revision']>>;
}

/** What a stage verified, or in words why it verified nothing. */
export type Verification =
  | { verified: Verified; missing: [] }
  | { verified: undefined; missing: string[] };

/**
 * Whether a stage verified a version (see the file's comment). A stage one of whose clusters'
 * current revisions is an automatic rollback verifies nothing until a new release completes
 * there: the rollback says the last version failed, even when the version it rolled back to was
 * verified before.
 */
export function verifyStage(options: {
  stage: string;
  clusters: readonly string[];
  /** The application's deployments and their current revisions, by cluster. */
  runs: ReadonlyMap<string, ClusterRun>;
  /** The application's releases, newest first. */
  releases: readonly StageRelease[];
}): Verification {
  const { stage, clusters, runs, releases } = options;
  if (clusters.length === 0) {
    return { verified: undefined, missing: [`${stage} holds no cluster`] };
  }
  const missing: string[] = [];
  const versions = new Map<string, string[]>();
  const revisions: Verified['revisions'] = [];
  for (const cluster of clusters) {
    const run = runs.get(cluster);
    if (!run) {
      missing.push(`${cluster} runs nothing`);
      continue;
    }
    const version = versionOf(run.revision);
    if (version !== undefined)
      versions.set(version, [...(versions.get(version) ?? []), cluster]);
    if (run.revision?.cause === 'auto-rollback') {
      missing.push(
        `${cluster} was rolled back automatically (revision ${run.revision.revision}): a new release must complete`,
      );
    } else if (run.deployment.status !== 'DEPLOYED') {
      missing.push(`${cluster} is ${run.deployment.status}`);
    }
    if (run.revision) revisions.push(run.revision);
  }
  if (versions.size > 1) {
    missing.push(
      `its clusters run different versions (${[...versions]
        .map(([v, on]) => `${v} on ${on.join(', ')}`)
        .join('; ')})`,
    );
  }
  const version = versions.size === 1 ? [...versions.keys()][0] : undefined;
  if (missing.length > 0) {
    // Say what the others run, so that "sim-3 is PROGRESSING" reads against the version.
    const good = clusters.filter(
      c => !missing.some(m => m.startsWith(`${c} `)),
    );
    const prefix =
      version && good.length > 0
        ? `${stage} runs ${version} on ${good.join(', ')} but `
        : `${stage}: `;
    return {
      verified: undefined,
      missing: [`${prefix}${missing.join('; ')}`],
    };
  }
  // The newest release that brought one of these revisions.
  const current = new Set(
    revisions.map(r => `${r.deploymentId}#${r.revision}`),
  );
  const release = releases.find(r =>
    r.record.targets.some(t => current.has(`${t.deploymentId}#${t.revision}`)),
  );
  if (!release) {
    return {
      verified: undefined,
      missing: [`${stage} runs ${version} but no release brought it there`],
    };
  }
  if (!release.completed) {
    return {
      verified: undefined,
      missing: [
        `${stage} runs ${version} but its release ${release.record.id} has not completed`,
      ],
    };
  }
  const times = revisions.map(r =>
    r.outcomeAt ? Date.parse(r.outcomeAt) : NaN,
  );
  if (times.some(Number.isNaN) || !version) {
    return {
      verified: undefined,
      missing: [`${stage} runs ${version} but a rollout has not ended`],
    };
  }
  return {
    verified: { version, since: new Date(Math.max(...times)), revisions },
    missing: [],
  };
}

/** What a release to a stage that requires another may take, or in words why none. */
export type Promotion =
  | {
      ok: true;
      /** The version to release (the required stage's verified one). */
      version: string;
      /** A revision that runs it: its image or its source. */
      revision: Verified['revisions'][number];
    }
  | { ok: false; missing: string[] };

/**
 * Whether a stage requiring `required` may take a version: the required stage verified it (the
 * requested one, or when none is requested the one it verified), at least `soak` before `now`.
 * Approvals are not checked.
 */
export function promotion(options: {
  requires: NonNullable<Stage['requires']>;
  verification: Verification;
  /** The image or manifests version the release asks for, if it names one. */
  requested?: string;
  now: Date;
}): Promotion {
  const { requires, verification, requested, now } = options;
  if (!verification.verified) {
    return { ok: false, missing: verification.missing };
  }
  const { verified } = verification;
  const revision = verified.revisions[0];
  if (requested !== undefined && !runsRequested(revision, requested)) {
    return {
      ok: false,
      missing: [
        `${requires.stage} verified ${verified.version}, not ${requested}`,
      ],
    };
  }
  const until = soakedUntil(verified, requires.soak);
  if (until && until.getTime() > now.getTime()) {
    return {
      ok: false,
      missing: [
        `${requires.stage} runs ${
          verified.version
        } since ${verified.since.toISOString()}: soaked until ${until.toISOString()}`,
      ],
    };
  }
  return { ok: true, version: verified.version, revision };
}

/** When a verified version has soaked `soak` (undefined for an unreadable soak). */
export function soakedUntil(
  verified: Pick<Verified, 'since'>,
  soak: string | undefined,
): Date | undefined {
  const ms = soakMs(soak);
  return ms === undefined ? undefined : new Date(verified.since.getTime() + ms);
}
