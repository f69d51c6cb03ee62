/**
 * The simulator's per-object failure switches, by image tag, so a test or a demo can make one
 * workload fail while the others of the same cluster are fine:
 * - a tag ending in `broken` (`busybox:broken`, `app:v2-broken`): the container runs but never
 *   becomes ready (its readiness probe fails): pods Running and not ready, no restarts;
 * - a tag ending in `crashloop` (`app:crashloop`, `app:v2-crashloop`): the container exits at
 *   once and is restarted with a back-off: pods not ready, `CrashLoopBackOff`, restarts counted.
 * Either way the Deployment, StatefulSet or DaemonSet running it never completes its rollout (its
 * progress stalls until `progressDeadlineSeconds` marks it ProgressDeadlineExceeded), and a Job
 * running it fails.
 */
import { asArray, asObject } from './util';

/** How a container of this image fails, by its tag (not its digest); undefined: it does not. */
export function imageFailure(
  image: unknown,
): 'broken' | 'crashloop' | undefined {
  const ref = String(image ?? '').split('@')[0];
  const last = ref.split('/').pop() ?? '';
  const colon = last.lastIndexOf(':');
  if (colon < 0) return undefined;
  const tag = last.slice(colon + 1);
  if (tag.endsWith('crashloop')) return 'crashloop';
  if (tag.endsWith('broken')) return 'broken';
  return undefined;
}

/** Whether an image reference's tag makes its container never ready (`broken` or `crashloop`). */
export function isBrokenImage(image: unknown): boolean {
  return imageFailure(image) !== undefined;
}

function imagesOf(podSpec: unknown): unknown[] {
  const spec = asObject(podSpec);
  return [...asArray(spec?.containers), ...asArray(spec?.initContainers)].map(
    c => asObject(c)?.image,
  );
}

/** Whether a pod spec runs a failing image (either switch), in a container or an init container. */
export function isBrokenPodSpec(podSpec: unknown): boolean {
  return imagesOf(podSpec).some(isBrokenImage);
}

/** Whether a pod spec runs a crash-looping image (a tag ending in `crashloop`). */
export function isCrashLoopPodSpec(podSpec: unknown): boolean {
  return imagesOf(podSpec).some(image => imageFailure(image) === 'crashloop');
}

/** Whether a pod template (`spec.template` of a workload) runs a failing image. */
export function isBrokenTemplate(template: unknown): boolean {
  return isBrokenPodSpec(asObject(template)?.spec);
}
