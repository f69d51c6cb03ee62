import { ConflictError } from '@backstage/errors';
import type { ReleaseRecord, ReleaseStore } from '../database/types';

/** The phases of a release with a strategy that has not ended. */
const RUNNING = new Set(['PROGRESSING', 'PAUSED', 'ABORTING']);

/** The application's release with a strategy that is still running, if any. */
export async function runningRelease(
  releases: Pick<ReleaseStore, 'listReleases'>,
  applicationId: string,
): Promise<ReleaseRecord | undefined> {
  return (await releases.listReleases(applicationId)).find(
    r => !!r.phase && RUNNING.has(r.phase),
  );
}

/**
 * A change that would silently supersede a running release with a strategy (an immediate
 * release, a rollback or a deploy by hand on one of its clusters) is refused: the release owns
 * those clusters until it ends. Throws a 409 naming the release and how to end it.
 */
export async function assertNoRunningRelease(
  releases: Pick<ReleaseStore, 'listReleases'> | undefined,
  application: { id: string; entityRef: string },
  what: string,
  cluster?: string,
): Promise<void> {
  if (!releases) return;
  const running = await runningRelease(releases, application.id);
  if (!running) return;
  if (
    cluster !== undefined &&
    !running.progress?.clusters.some(c => c.cluster === cluster)
  )
    return;
  throw new ConflictError(
    `Release '${running.id}' of '${application.entityRef}' is still ${
      running.phase
    }${
      cluster ? ` on '${cluster}'` : ''
    }: ${what} would silently supersede it. End it first with POST /releases/${
      running.id
    }/abort (or wait for it to end)`,
  );
}
