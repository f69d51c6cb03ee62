import type { FleetApiComponents } from '@cnp/plugin-fleet-common';

/** An application's stage, as its spec gives it. */
export type Stage = FleetApiComponents['schemas']['Stage'];

const SOAK = /^([0-9]{1,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A soak's duration in milliseconds (`30m`, `2h`, `1d`; none: 0); undefined when unreadable. */
export function soakMs(soak: string | undefined): number | undefined {
  if (soak === undefined) return 0;
  const match = SOAK.exec(soak);
  if (!match) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/** One problem of a list of stages, at its path below the list. */
export interface StageIssue {
  path: Array<string | number>;
  message: string;
}

/**
 * What the spec's schema cannot say of an application's stages: each names its clusters one way
 * (names or a selector, not both, not neither); names are unique; a stage requires an earlier
 * stage (so that a version moves forward only, and no two stages wait on each other); a named
 * cluster is in one stage at most. Clusters a selector picks are only known when a release runs:
 * a cluster that two stages hold then is refused there.
 */
export function stageIssues(
  stages: readonly Stage[] | undefined,
): StageIssue[] {
  const issues: StageIssue[] = [];
  const seen = new Map<string, number>();
  const clusterStage = new Map<string, string>();
  (stages ?? []).forEach((stage, index) => {
    const hasNames = stage.clusters !== undefined;
    const hasSelector = stage.clusterSelector !== undefined;
    if (hasNames === hasSelector) {
      issues.push({
        path: [index],
        message: hasNames
          ? 'give clusters or clusterSelector, not both'
          : 'needs clusters or a clusterSelector',
      });
    }
    const required = stage.requires?.stage;
    if (required !== undefined && !seen.has(required)) {
      issues.push({
        path: [index, 'requires', 'stage'],
        message:
          required === stage.name
            ? 'a stage cannot require itself'
            : `must name an earlier stage ('${required}' is not before '${stage.name}')`,
      });
    }
    if (seen.has(stage.name)) {
      issues.push({
        path: [index, 'name'],
        message: `'${stage.name}' is the name of stage ${seen.get(
          stage.name,
        )} already: stage names must be unique`,
      });
    } else {
      seen.set(stage.name, index);
    }
    for (const cluster of new Set(stage.clusters ?? [])) {
      const other = clusterStage.get(cluster);
      if (other !== undefined && other !== stage.name) {
        issues.push({
          path: [index, 'clusters'],
          message: `cluster '${cluster}' is in stage '${other}' already: a cluster belongs to one stage at most`,
        });
      } else {
        clusterStage.set(cluster, stage.name);
      }
    }
  });
  return issues;
}
