import { imageVersion, type StageStatus } from '@cnp/plugin-fleet-common';

/** A version, short: an image's tag (or digest), a manifests version or commit as it is. */
export function shortVersion(version: string): string {
  return version.includes('/') || version.includes(':')
    ? imageVersion(version)
    : version;
}

/**
 * What the stage's clusters run: its version, "mixed" when they run different ones, "none" when
 * none runs one (or the stage holds no cluster).
 */
export function runsText(stage: StageStatus, deployedClusters: Set<string>) {
  if (stage.version) return shortVersion(stage.version);
  return stage.clusters.some(c => deployedClusters.has(c)) ? 'mixed' : 'none';
}

/**
 * Whether a stage that requires another may take that stage's verified version: "ready to take
 * 1.5.0", "runs staging's verified 1.5.0", or "not ready" (the reasons are in `missing`);
 * undefined for a stage that requires none.
 */
export function readinessText(
  stage: StageStatus,
  required?: StageStatus,
): string | undefined {
  if (!stage.requires) return undefined;
  const verified = required?.verified?.version;
  if (stage.missing.length > 0)
    return verified
      ? `not ready to take ${shortVersion(verified)}`
      : 'not ready';
  if (!verified) return `${stage.requires} verified no version yet`;
  if (stage.version === verified)
    return `runs ${stage.requires}'s verified ${shortVersion(verified)}`;
  return `ready to take ${shortVersion(verified)}`;
}
