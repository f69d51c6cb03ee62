import type { V1Lifecycle } from '@kubernetes/client-node';

/** `v1.30.2`, `v1.29.4-eks-1a2b3c`, `v1.31.0+k3s1`: major and minor; undefined otherwise. */
export function kubernetesMinorOf(
  serverVersion: string | null | undefined,
): [number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(serverVersion?.trim() ?? '');
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** Whether a cluster serves the `sleep` lifecycle action (on by default from Kubernetes 1.30). */
export function servesSleepAction(serverVersion: string | null | undefined) {
  const version = kubernetesMinorOf(serverVersion);
  if (!version) return false;
  const [major, minor] = version;
  return major > 1 || (major === 1 && minor >= 30);
}

/**
 * The preStop hook that keeps a stopping container serving `seconds` (none at 0): the `sleep`
 * action on a cluster known to run Kubernetes 1.30 or later; elsewhere (an older cluster, or one
 * whose version is not known yet) an `exec` of `sleep`, which needs a `sleep` binary in the
 * image (without one the hook fails, the kubelet records a FailedPreStopHook event and stops
 * the container at once: the pod stops as it would without a hook).
 */
export function preStopHook(
  seconds: number,
  serverVersion: string | null | undefined,
): V1Lifecycle | undefined {
  if (seconds <= 0) return undefined;
  return servesSleepAction(serverVersion)
    ? { preStop: { sleep: { seconds } } }
    : { preStop: { exec: { command: ['sleep', String(seconds)] } } };
}
