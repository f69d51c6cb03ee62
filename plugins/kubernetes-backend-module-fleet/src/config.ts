import { readDurationFromConfig, type Config } from '@backstage/config';
import { durationToMilliseconds } from '@backstage/types';

/** The config key of the deadline each cluster has to answer a call of the Kubernetes tab. */
export const REQUEST_TIMEOUT_KEY = 'kubernetes.fleet.requestTimeout';

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const MAX_REQUEST_TIMEOUT_MS = 10 * 60_000;

/**
 * `kubernetes.fleet.requestTimeout` in milliseconds (default 10 s); a malformed value, or one
 * not above 0 and up to 10 minutes, stops the backend with a message naming the key.
 */
export function readRequestTimeoutMs(config: Config): number {
  const own = config.getOptionalConfig('kubernetes.fleet');
  if (!own?.has('requestTimeout')) return DEFAULT_REQUEST_TIMEOUT_MS;
  let ms: number;
  try {
    ms = durationToMilliseconds(
      readDurationFromConfig(own, { key: 'requestTimeout' }),
    );
  } catch (error) {
    throw new Error(
      `Invalid config value ${REQUEST_TIMEOUT_KEY}: ${
        (error as Error).message
      } (a duration such as '10s' or { seconds: 10 })`,
    );
  }
  if (!(ms > 0) || ms > MAX_REQUEST_TIMEOUT_MS) {
    throw new Error(
      `Invalid config value ${REQUEST_TIMEOUT_KEY}: must be above 0 and at most 10 minutes`,
    );
  }
  return ms;
}
