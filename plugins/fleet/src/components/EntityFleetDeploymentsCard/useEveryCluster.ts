import type { Cluster } from '@cnp/plugin-fleet-common';
import { useEffect, useState } from 'react';
import type { FleetApi } from '../../api';

/**
 * Every cluster of the fleet, for the Deploy and Release dialogs' pickers: read when `wanted`
 * turns true (a dialog opens), not on every poll of the card; the last list read is kept while
 * the dialogs are closed.
 */
export function useEveryCluster(
  api: FleetApi,
  wanted: boolean,
): { clusters?: Cluster[]; error?: Error } {
  const [state, setState] = useState<{ clusters?: Cluster[]; error?: Error }>(
    {},
  );
  useEffect(() => {
    if (!wanted) return undefined;
    let current = true;
    api.listClusters().then(
      clusters => {
        if (current) setState({ clusters });
      },
      error => {
        if (current) setState(last => ({ ...last, error }));
      },
    );
    return () => {
      current = false;
    };
  }, [api, wanted]);
  return state;
}
