import type { KubernetesObject } from '@kubernetes/client-node';
import type { RevisionStore } from '../database/types';
import { identityOf, refOf } from './objectRefs';

/** How many of a deployment's newest revisions are looked at. */
const LOOKBACK = 50;

/**
 * The objects a deployment's revisions of a component's own manifests may have left on its
 * cluster, as of revision `upTo`: that revision's, and those of each revision before it back to
 * the newest that reached `DEPLOYED`, whose apply pruned what came before it. An apply that
 * failed part way (a kind the cluster does not serve, a field conflict, an unreachable cluster)
 * never pruned, so what the revision before it had is still there. Each object once, as the
 * newest revision recorded it; undefined when none of them recorded objects. Only the newest
 * revisions are looked at (`LOOKBACK`).
 */
export async function objectsLeftBy(
  revisions: Pick<RevisionStore, 'listRevisions' | 'getRevisionObjects'>,
  deploymentId: string,
  upTo: number,
): Promise<KubernetesObject[] | undefined> {
  const chain: number[] = [];
  // The newest revisions only: a deploy reads this on every apply.
  const newest = await revisions.listRevisions(deploymentId, {
    limit: LOOKBACK,
  });
  for (const revision of newest) {
    if (revision.revision > upTo) continue;
    if (revision.source) chain.push(revision.revision);
    if (revision.revision < upTo && revision.outcome === 'DEPLOYED') break;
  }
  const recorded = await Promise.all(
    chain.map(revision => revisions.getRevisionObjects(deploymentId, revision)),
  );
  if (recorded.every(objects => objects === undefined)) return undefined;
  const byIdentity = new Map<string, KubernetesObject>();
  for (const objects of recorded) {
    for (const object of objects ?? []) {
      const identity = identityOf(refOf(object));
      if (!byIdentity.has(identity)) byIdentity.set(identity, object);
    }
  }
  return [...byIdentity.values()];
}
