import { Config, readDurationFromConfig } from '@backstage/config';
import { durationToMilliseconds, HumanDuration } from '@backstage/types';
import { asError } from '../util/errors';

/*
 * Reading one value of Fleet's settings, checked: a nonsense value stops the backend at startup
 * with a message naming the variable or the config key.
 */

export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function positiveIntegerFromEnv(
  env: NodeJS.ProcessEnv,
  name: string,
  { min = 1, max = Number.MAX_SAFE_INTEGER } = {},
): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const trimmed = raw.trim();
  const value = Number(trimmed);
  if (
    !/^\d+$/.test(trimmed) ||
    !Number.isSafeInteger(value) ||
    value < min ||
    value > max
  ) {
    throw new Error(
      `Invalid environment variable ${name}='${raw}': expected an integer between ${min} and ${max}`,
    );
  }
  return value;
}

export function integerFromConfig(
  config: Config,
  key: string,
  fallback: number,
  { min = 1, max = Number.MAX_SAFE_INTEGER } = {},
): number {
  const value = config.getOptionalNumber(key);
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(
      `Invalid config value fleet.${key}=${value}: expected an integer between ${min} and ${max}`,
    );
  }
  return value;
}

export function durationMsFromConfig(
  config: Config,
  key: string,
  fallback: HumanDuration,
  { allowZero = false } = {},
): number {
  let duration: HumanDuration;
  try {
    duration = config.has(key)
      ? readDurationFromConfig(config, { key })
      : fallback;
  } catch (error) {
    throw new Error(
      `Invalid config value fleet.${key}: ${asError(error).message}`,
    );
  }
  const ms = durationToMilliseconds(duration);
  if (allowZero ? !(ms >= 0) : !(ms > 0)) {
    throw new Error(
      `Invalid config value fleet.${key}: the duration must be ${
        allowZero ? 'zero or more' : 'positive'
      }`,
    );
  }
  return ms;
}

/** The trimmed value, or undefined when it is missing or blank. */
export function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value.trim() : undefined;
}
