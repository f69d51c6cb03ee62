import { resolvePackagePath } from '@backstage/backend-plugin-api';

/** The path of one of the harness's child scripts (`processes/<file>`), to fork with `forkTs`. */
export function harnessScript(file: string): string {
  return resolvePackagePath('@cnp/fleet-harness', 'src', 'processes', file);
}

/**
 * Discovery of one kubeconfig directory in a throw-away process: it reports event-loop ticks,
 * its warnings and its peak RSS.
 */
export const DISCOVER_CHILD_SCRIPT = harnessScript('discoverChild.ts');
