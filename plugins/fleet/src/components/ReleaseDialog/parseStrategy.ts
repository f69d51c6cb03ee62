import type { ReleaseStrategy } from '@cnp/plugin-fleet-common';
import { parse } from 'yaml';

/**
 * The strategy a user wrote in YAML, or why it cannot be read. Only the YAML and its shape (a
 * mapping) are checked here; the API validates the strategy itself and answers 400 with its reason.
 */
export function parseStrategy(text: string): {
  strategy?: ReleaseStrategy;
  error?: string;
} {
  if (text.trim() === '')
    return { error: 'Write a strategy, or turn off Progressive' };
  let value: unknown;
  try {
    value = parse(text, { prettyErrors: true });
  } catch (e) {
    return { error: `Not valid YAML: ${(e as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      error:
        'The strategy is a YAML mapping with waves, canary, analysis and rollback',
    };
  }
  return { strategy: value as ReleaseStrategy };
}
