import { asArray, isPlainObject, rfc3339 } from './util';

/** A status condition, as Kubernetes controllers write them. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

/**
 * The new conditions with the timestamps of unchanged ones kept, as controllers do: the update
 * time moves when the status, reason or message changes, the transition time when the status
 * does.
 */
export function mergeConditions<C extends Condition>(
  previous: unknown,
  next: C[],
  now: number,
): C[] {
  const old = asArray(previous).filter(isPlainObject) as unknown as Condition[];
  const ts = rfc3339(now);
  return next.map(c => {
    const prev = old.find(o => o.type === c.type);
    const sameStatus = prev && prev.status === c.status;
    const sameContent =
      sameStatus && prev.reason === c.reason && prev.message === c.message;
    return {
      ...c,
      lastUpdateTime: sameContent ? prev.lastUpdateTime : ts,
      lastTransitionTime: sameStatus ? prev.lastTransitionTime : ts,
    };
  });
}
