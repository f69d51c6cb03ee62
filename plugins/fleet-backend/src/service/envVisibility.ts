import type {
  Application,
  EnvMap,
  Release,
  Revision,
} from '@cnp/plugin-fleet-common';
import { redactDetail } from '../util/redactDetail';

/*
 * Environment values are readable only by those allowed to deploy the component: others see each
 * variable's name, its plain value as null. References to a Secret's or ConfigMap's key are not
 * values (Fleet never holds those), so they stay.
 */

export function hideEnvValues(env: EnvMap | null | undefined) {
  if (!env) return env;
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [
      name,
      typeof value === 'string' ? null : value,
    ]),
  );
}

export function hideApplicationEnv(application: Application): Application {
  return {
    ...application,
    spec: { ...application.spec, env: hideEnvValues(application.spec.env) },
    placement: {
      ...application.placement,
      ...(application.placement.overrides
        ? {
            overrides: application.placement.overrides.map(o => ({
              ...o,
              env: hideEnvValues(o.env),
            })),
          }
        : {}),
    },
  } as Application;
}

export function hideRevisionEnv(revision: Revision): Revision {
  return { ...revision, env: hideEnvValues(revision.env) ?? null };
}

/**
 * A release as those who are not cluster admins see it: the cluster messages, the abort and the
 * skip reasons carry no kubeconfig path or host error code (a step that failed for want of a
 * kubeconfig says why only to admins).
 */
export function redactReleaseDetails(release: Release): Release {
  return {
    ...release,
    skipped: release.skipped.map(s => ({
      ...s,
      reason: redactDetail(s.reason),
    })),
    progress: release.progress
      ? {
          ...release.progress,
          clusters: release.progress.clusters.map(c => ({
            ...c,
            message: redactDetail(c.message),
          })),
          abort: release.progress.abort
            ? {
                ...release.progress.abort,
                message: redactDetail(release.progress.abort.message),
              }
            : release.progress.abort,
        }
      : release.progress,
  };
}

export function hideReleaseEnv(release: Release): Release {
  return { ...release, env: hideEnvValues(release.env) ?? null };
}
