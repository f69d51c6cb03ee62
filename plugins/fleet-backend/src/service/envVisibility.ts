import type {
  Application,
  EnvMap,
  Release,
  Revision,
} from '@cnp/plugin-fleet-common';
import { noResultWord } from '../progressive/analysis';
import { redactDetail } from '../util/redactDetail';

/*
 * Environment values are readable only by those allowed to deploy the component: others see each
 * variable's name, its value as null. That holds for references to a Secret's or a ConfigMap's
 * key too: their names and keys say which secrets an application reads, which is its team's
 * business only.
 */

export function hideEnvValues(env: EnvMap | null | undefined) {
  if (!env) return env;
  return Object.fromEntries(Object.keys(env).map(name => [name, null]));
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

/** What a caller may see of one component's releases. */
export interface ReleaseViewer {
  /** A cluster admin sees kubeconfig paths and host errors. */
  clusterAdmin: boolean;
  /** Whether the caller may deploy the release's component (then they see its env values). */
  mayDeploy: (entityRef: string) => boolean;
}

/**
 * The view of the answers to writes that carry a release (a new release, promote, pause, resume,
 * abort), as for the other writes: no host details and no environment values, whoever asks
 * (`GET /releases/:id` shows each caller what they may see). It costs no permission decision.
 */
export const RESTRICTED_RELEASE_VIEW: ReleaseViewer = {
  clusterAdmin: false,
  mayDeploy: () => false,
};

/**
 * A release as one caller may see it: every answer that carries a release (lists, reads, the
 * answer of a new release, of promote, pause, resume and abort) goes through here.
 */
export function releaseForCaller(
  release: Release,
  viewer: ReleaseViewer,
): Release {
  const withEnv = viewer.mayDeploy(release.entityRef)
    ? release
    : hideReleaseEnv(release);
  const shown = withoutProviderText(withEnv);
  return viewer.clusterAdmin ? shown : redactReleaseDetails(shown);
}

/**
 * A provider's text is shown to nobody: an inconclusive measurement says `error`, `unreachable`
 * or `no data`, a success or a failure nothing but its value, also one stored before
 * measurements were written that way.
 */
function withoutProviderText(release: Release): Release {
  if (!release.progress?.analysis.length) return release;
  return {
    ...release,
    progress: {
      ...release.progress,
      analysis: release.progress.analysis.map(m => {
        if (m.phase === 'Inconclusive' && m.message)
          return { ...m, message: noResultWord(m.message) };
        if (m.phase === 'Successful' || m.phase === 'Failed') {
          // A success or a failure says it with its value (a module provider's text was kept).
          const { message: _text, ...measured } = m;
          return measured;
        }
        return m;
      }),
    },
  };
}
