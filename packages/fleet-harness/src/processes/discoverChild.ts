/*
 * Runs Fleet's kubeconfig discovery over one directory in a throw-away process, reporting
 * event-loop ticks while it runs, so a parent can tell a blocked or runaway discovery apart
 * (and kill it) without risking its own process.
 */
// The harness wires the plugin's own parts: it exists to build the backend plugin.
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import { discoverKubeconfigClusters } from '@cnp/plugin-fleet-backend/testUtils';

const dir = process.argv[2];
const tick = setInterval(() => process.send?.({ type: 'tick' }), 100);
process.send?.({ type: 'started' });
discoverKubeconfigClusters({ kubeconfigDir: dir }).then(
  result => {
    clearInterval(tick);
    process.send?.(
      {
        type: 'done',
        clusters: result.clusters.length,
        warnings: result.warnings,
        // The child's own high-water mark (KiB on Linux): sampling from the parent can miss a
        // short spike, and finds no RSS at all once the child has exited.
        maxRssMiB: process.resourceUsage().maxRSS / 1024,
      },
      () => process.exit(0),
    );
  },
  error => {
    clearInterval(tick);
    process.send?.(
      { type: 'error', message: String(error?.message ?? error) },
      () => process.exit(0),
    );
  },
);
