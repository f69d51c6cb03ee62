import type { Json, ObjectHealth } from './types';
import { health, isNil, list, record, text } from './fields';

/* gitops-engine's Job check and Argo CD's CronJob health script. */

export function jobHealth(obj: Json): ObjectHealth {
  let failed = false;
  let complete = false;
  let suspended = false;
  let failMessage = '';
  let message = '';
  for (const condition of list(record(obj.status).conditions)) {
    switch (condition.type) {
      case 'Failed':
        failed = true;
        complete = true;
        failMessage = text(condition.message);
        break;
      case 'Complete':
        complete = true;
        message = text(condition.message);
        break;
      case 'Suspended':
        complete = true;
        message = text(condition.message);
        if (condition.status === 'True') suspended = true;
        break;
      default:
    }
  }
  if (!complete) return health('Progressing', message);
  if (failed) return health('Degraded', failMessage);
  if (suspended) return health('Suspended', message);
  return health('Healthy', message);
}

/** Argo CD's `cronjob` health script (`resource_customizations/batch/CronJob`). */
export function cronJobHealth(obj: Json): ObjectHealth {
  if (record(obj.spec).suspend === true) {
    return health('Healthy', 'CronJob is Suspended');
  }
  if (isNil(obj.status)) {
    return health('Progressing', 'Waiting for CronJob');
  }
  const status = record(obj.status);
  const lastSchedule = status.lastScheduleTime;
  if (typeof lastSchedule !== 'string') {
    return health('Healthy', 'CronJob has not been scheduled yet');
  }
  const lastSuccess = status.lastSuccessfulTime;
  if (typeof lastSuccess !== 'string') {
    return health(
      'Healthy',
      'The CronJob never completed successfully. It may not be healthy',
    );
  }
  if (list(status.active).length > 0) {
    return health(
      'Healthy',
      'The job is running. Its last execution may not have been successful',
    );
  }
  // Both are RFC 3339 times in UTC written by the same controller, so they order as strings,
  // as the script compares them.
  if (lastSuccess < lastSchedule) {
    return health(
      'Degraded',
      'CronJob has not completed its last execution successfully',
    );
  }
  return health(
    'Healthy',
    'CronJob has completed its last execution successfully',
  );
}
