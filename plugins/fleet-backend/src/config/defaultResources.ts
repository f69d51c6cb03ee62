import { Config } from '@backstage/config';
import { compareQuantities } from '@cnp/plugin-fleet-common';

/** Default requests and limits of the containers Fleet deploys (cpu and memory). */
export interface DefaultResources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;

/** `fleet.deploy.defaultResources`: cpu and memory quantities, each request at most its limit. */
export function readDefaultResources(
  config: Config,
): DefaultResources | undefined {
  const section = config.getOptionalConfig('deploy.defaultResources');
  if (!section) return undefined;
  const out: DefaultResources = {};
  for (const kind of ['requests', 'limits'] as const) {
    const values = section.getOptionalConfig(kind);
    if (!values) continue;
    const entries: Record<string, string> = {};
    for (const resource of values.keys()) {
      if (resource !== 'cpu' && resource !== 'memory') {
        throw new Error(
          `Invalid config value fleet.deploy.defaultResources.${kind}.${resource}: only cpu and memory are supported`,
        );
      }
      const value = String(values.get(resource));
      if (!QUANTITY.test(value)) {
        throw new Error(
          `Invalid config value fleet.deploy.defaultResources.${kind}.${resource}='${value}': expected a Kubernetes quantity such as 250m or 512Mi`,
        );
      }
      entries[resource] = value;
    }
    out[kind] = entries;
  }
  for (const resource of ['cpu', 'memory']) {
    const request = out.requests?.[resource];
    const limit = out.limits?.[resource];
    if (request && limit && (compareQuantities(request, limit) ?? 0) > 0) {
      throw new Error(
        `Invalid config value fleet.deploy.defaultResources: the ${resource} request ${request} is above its limit ${limit}`,
      );
    }
  }
  return out;
}
