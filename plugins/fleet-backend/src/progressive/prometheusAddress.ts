import { InputError } from '@backstage/errors';
import type { ReleaseStrategy } from '@cnp/plugin-fleet-common';
import {
  ALLOWED_ADDRESSES_SETTING,
  normalizePrometheusAddress,
} from '../config/prometheusAddresses';

export {
  ALLOWED_ADDRESSES_SETTING,
  normalizePrometheusAddress,
  readAllowedAddresses,
} from '../config/prometheusAddresses';

/** Whether `address` is one of the allowed ones, both in their normalised spelling, exactly. */
export function isAllowedAddress(
  address: string,
  allowed: readonly string[],
): boolean {
  const normalized = normalizePrometheusAddress(address);
  return (
    normalized !== undefined &&
    allowed.some(entry => normalizePrometheusAddress(entry) === normalized)
  );
}

/**
 * Refuses (400) a strategy whose analysis queries a Prometheus the platform did not list:
 * Fleet queries it with its own network position, and the address also goes into the clusters'
 * AnalysisTemplates. With no address listed, no analysis runs (fail closed).
 */
export function checkAnalysisAddresses(
  strategy: Pick<ReleaseStrategy, 'analysis'> | undefined,
  allowed: readonly string[],
): void {
  strategy?.analysis?.templates.forEach((template, index) => {
    if (!template.provider.prometheus) return;
    const { address } = template.provider.prometheus;
    if (isAllowedAddress(address, allowed)) return;
    throw new InputError(
      `Invalid release: strategy.analysis.templates.${index}.provider.prometheus.address: '${address}' is not one of ${ALLOWED_ADDRESSES_SETTING} (${
        allowed.length
          ? // Credentials an entry may carry are the platform's, never shown.
            allowed.map(a => a.replace(/\/\/[^/@]*@/, '//')).join(', ')
          : 'it lists no address: analyses are off until the platform lists its Prometheus servers there'
      })`,
    );
  });
}
