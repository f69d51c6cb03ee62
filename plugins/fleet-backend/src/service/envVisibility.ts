import type {
  Application,
  EnvMap,
  Release,
  Revision,
} from '@cnp/plugin-fleet-common';

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

export function hideReleaseEnv(release: Release): Release {
  return { ...release, env: hideEnvValues(release.env) ?? null };
}
