import { useApi } from '@backstage/core-plugin-api';
import { useState } from 'react';
import { apiErrorMessage, fleetApiRef } from '../../api';

/** The outcome of the last run: its counts, or the failure in the API's words. */
export interface HealthCycleRunMessage {
  severity: 'success' | 'error';
  text: string;
}

/**
 * Runs a health cycle on demand: `running` while it runs, then its `message`; `onDone` follows a
 * successful run (to fetch the new statuses).
 */
export function useHealthCycleRun(onDone: () => void): {
  run: () => Promise<void>;
  running: boolean;
  message?: HealthCycleRunMessage;
} {
  const api = useApi(fleetApiRef);
  const [running, setRunning] = useState(false);
  const [message, setMessage] = useState<HealthCycleRunMessage>();
  const run = async () => {
    setRunning(true);
    setMessage(undefined);
    try {
      const cycle = await api.runHealthCycle();
      const counts = `${cycle.online} ONLINE, ${cycle.offline} OFFLINE, ${cycle.unknown} UNKNOWN`;
      setMessage({
        severity: 'success',
        // A run asked too soon after the last cycle answers that cycle's summary.
        text: cycle.reused
          ? `The last health cycle finished moments ago, so nothing was probed again: ${counts}. A new run probes from ${new Date(
              cycle.reused.nextRunAt,
            ).toLocaleTimeString()}.`
          : `Health cycle done in ${cycle.durationMs} ms: ${counts}`,
      });
      onDone();
    } catch (e) {
      setMessage({ severity: 'error', text: apiErrorMessage(e) });
    } finally {
      setRunning(false);
    }
  };
  return { run, running, message };
}
