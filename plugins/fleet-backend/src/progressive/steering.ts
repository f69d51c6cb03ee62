import { ConflictError } from '@backstage/errors';
import type { ReleaseStrategy } from '@cnp/plugin-fleet-common';
import {
  abortRelease,
  freezePauses,
  nextStep,
  restartAnalysis,
  thawPauses,
  type Transition,
} from './releaseMachine';

export type SteeringAction = 'promote' | 'pause' | 'resume' | 'abort';

/**
 * What `promote`, `pause`, `resume` and `abort` do to a release's state; a `ConflictError` (409)
 * when the action does not apply to where the release is.
 */
export function applySteering(
  t: Transition,
  strategy: ReleaseStrategy,
  action: SteeringAction,
  actor: string,
  isOnline: (cluster: string) => boolean,
): void {
  const p = t.progress;
  const finished =
    p.phase === 'COMPLETED' ||
    p.phase === 'ROLLED_BACK' ||
    p.phase === 'ABORTING';
  if (finished) {
    throw new ConflictError(
      `The release is ${p.phase}: there is nothing to ${action}`,
    );
  }
  switch (action) {
    case 'promote': {
      if (p.phase === 'PAUSED') {
        throw new ConflictError(
          'The release is PAUSED: resume it before promoting',
        );
      }
      const paused = p.clusters.filter(
        c =>
          c.wave === p.currentWave &&
          c.state === 'RUNNING' &&
          c.stepIndex < strategy.canary.steps.length &&
          'pause' in strategy.canary.steps[c.stepIndex],
      );
      if (paused.length === 0) {
        throw new ConflictError(
          'No cluster of the current wave is in a pause: there is nothing to promote',
        );
      }
      for (const c of paused) nextStep(t, c, `promoted by ${actor}`);
      t.event(
        'PROMOTED',
        `Promoted by ${actor}: ${paused
          .map(c => c.cluster)
          .join(', ')} go on to their next step`,
        { actor, reason: 'PROMOTED' },
      );
      return;
    }
    case 'pause':
      if (p.phase === 'PAUSED')
        throw new ConflictError('The release is already PAUSED');
      freezePauses(t);
      p.phase = 'PAUSED';
      p.pausedBy = actor;
      t.event('PAUSED', `Paused by ${actor}`, {
        actor,
        from: 'PROGRESSING',
        reason: 'PAUSED',
      });
      return;
    case 'resume':
      if (p.phase !== 'PAUSED')
        throw new ConflictError(`The release is ${p.phase}, not PAUSED`);
      thawPauses(t);
      // A human resumed past what the analysis could not decide: it measures again, from zero.
      restartAnalysis(t);
      p.phase = 'PROGRESSING';
      p.pausedBy = null;
      // A failure that paused a release without rollback is left behind by a resume.
      if (p.abort && strategy.rollback?.enabled === false) p.abort = null;
      t.event('RESUMED', `Resumed by ${actor}`, {
        actor,
        from: 'PAUSED',
        reason: 'RESUMED',
      });
      return;
    case 'abort':
      abortRelease(
        t,
        { reason: 'ABORTED', message: `Aborted by ${actor}`, by: actor },
        isOnline,
        actor,
      );
      return;
    default:
      throw new ConflictError(`Unknown action '${action as string}'`);
  }
}
