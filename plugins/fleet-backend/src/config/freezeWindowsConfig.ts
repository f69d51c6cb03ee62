import type { Config } from '@backstage/config';
import {
  freezeWindowIssues,
  type FreezeWindowSpec,
} from '../stages/freezeWindows';
import { asError } from '../util/errors';

/** The setting that lists the freeze windows. */
export const FREEZE_WINDOWS_SETTING = 'fleet.release.freezeWindows';

const KEYS = new Set([
  'name',
  'clusterSelector',
  'cron',
  'start',
  'duration',
  'timeZone',
]);

/** One window's fields, as strings; a wrong type or an unknown key stops startup, naming it. */
function readWindow(window: Config, at: string): FreezeWindowSpec {
  // A misspelt key (`timezone`) would otherwise be dropped silently, and the window read in UTC.
  const unknown = window.keys().find(key => !KEYS.has(key));
  if (unknown !== undefined) {
    throw new Error(
      `Invalid config value ${at}.${unknown}: not a setting of a freeze window (${[
        ...KEYS,
      ].join(', ')})`,
    );
  }
  const read = (key: string, required: boolean) => {
    try {
      return required ? window.getString(key) : window.getOptionalString(key);
    } catch (error) {
      throw new Error(
        `Invalid config value ${at}.${key}: ${asError(error).message}`,
      );
    }
  };
  const spec: FreezeWindowSpec = {
    name: read('name', true)!,
    duration: read('duration', true)!,
    timeZone: read('timeZone', false) ?? 'UTC',
  };
  // An absent optional key stays absent rather than set to undefined.
  for (const key of ['clusterSelector', 'cron', 'start'] as const) {
    const value = read(key, false);
    if (value !== undefined) spec[key] = value;
  }
  return spec;
}

/**
 * Reads `fleet.release.freezeWindows` (default: none). A wrong window stops the backend at
 * startup with its first problem, named by index and key (see freezeWindowIssues).
 */
export function readFreezeWindows(
  config: Config,
  now: Date = new Date(),
): FreezeWindowSpec[] {
  const specs = (
    config.getOptionalConfigArray('release.freezeWindows') ?? []
  ).map((window, index) =>
    readWindow(window, `${FREEZE_WINDOWS_SETTING}[${index}]`),
  );
  const [issue] = freezeWindowIssues(specs, now);
  if (issue) {
    throw new Error(
      `Invalid config value ${FREEZE_WINDOWS_SETTING}[${issue.index}]${
        issue.field ? `.${issue.field}` : ''
      }: ${issue.message}`,
    );
  }
  return specs;
}
