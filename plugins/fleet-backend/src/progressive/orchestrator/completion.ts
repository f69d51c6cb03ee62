import type { CanaryClusterProgress } from '@cnp/plugin-fleet-common';
import { targetFor, trafficReached } from './canaryTarget';
import { afterRolloutCheck, fail, type Tick } from './tick';

/** At 100 %: the stable workload takes the new revision, then the canary goes, stage by stage. */
export async function complete(tick: Tick, c: CanaryClusterProgress) {
  if (c.stage === 'deploy') await deployNewRevision(tick, c);
  if (c.stage === 'wait') await awaitNewRevision(tick, c);
  if (c.stage === 'cleanup') await removeCanary(tick, c);
}

/** The stable workload takes the new revision (or the one this release made before a restart). */
async function deployNewRevision(tick: Tick, c: CanaryClusterProgress) {
  const { t, application, record } = tick;
  const { deployments, stores } = tick.deps;
  const current = await stores.deployments.getDeployment(c.deploymentId!);
  if (current && current.revision > (c.previousRevision ?? 0)) {
    // Made by this release before a restart: adopted, not made twice. Anything else (a
    // deploy or a rollback by hand during the canary) is not the release's to finish.
    const newer = await stores.revisions.getRevision(
      current.id,
      current.revision,
    );
    const ours =
      newer?.cause === 'release' &&
      newer.createdBy === record.createdBy &&
      Date.parse(newer.createdAt) >= Date.parse(record.createdAt);
    if (!ours) {
      fail(tick, {
        reason: 'STEP_FAILED',
        message: `${c.cluster}: revision ${current.revision} (${
          newer?.cause ?? 'unknown'
        } by ${newer?.createdBy ?? 'someone'}) came in during the release`,
        cluster: c.cluster,
      });
      return;
    }
    c.revision = current.revision;
  } else {
    const made = await deployments.deploy(
      {
        entityRef: application.entityRef,
        cluster: c.cluster,
        image: record.request.image,
        replicas: record.request.replicas,
        env: record.request.env,
        version: record.request.version,
        cause: 'release',
      },
      record.createdBy,
    );
    c.revision = made.revision;
  }
  tick.targets = [
    ...tick.targets.filter(x => x.cluster !== c.cluster),
    {
      cluster: c.cluster,
      deploymentId: c.deploymentId!,
      revision: c.revision!,
    },
  ];
  c.stage = 'wait';
  t.changed = true;
}

/** Follows the new revision's rollout on the stable workload. */
async function awaitNewRevision(tick: Tick, c: CanaryClusterProgress) {
  const { t } = tick;
  const current = await afterRolloutCheck(tick, c);
  if (!current || current.revision !== c.revision) {
    fail(tick, {
      reason: 'STEP_FAILED',
      message: `${c.cluster}: the deployment moved on to another revision during the release`,
      cluster: c.cluster,
    });
    return;
  }
  if (current.status === 'FAILED') {
    fail(tick, {
      reason: 'STEP_FAILED',
      message: `${c.cluster}: the new revision failed: ${
        current.message ?? current.statusReason ?? ''
      }`,
      cluster: c.cluster,
    });
    return;
  }
  if (current.status !== 'DEPLOYED') return;
  c.stage = 'cleanup';
  t.changed = true;
}

/** The traffic back on the stable workload, then the canary removed: the cluster is done. */
async function removeCanary(tick: Tick, c: CanaryClusterProgress) {
  const { t } = tick;
  const target = await targetFor(tick, c);
  if (!target) return;
  const back = await trafficReached(tick, c, provider =>
    provider.trafficToStable(target, { cause: 'completion' }),
  );
  if (!back) return;
  if (!(await trafficReached(tick, c, p => p.removeCanary(target)))) return;
  c.state = 'DONE';
  c.stage = null;
  c.message = `on revision ${c.revision}`;
  t.event(
    'CLUSTER_DONE',
    `${c.cluster}: on revision ${c.revision}, canary removed`,
    { reason: 'CLUSTER_DONE' },
  );
}
