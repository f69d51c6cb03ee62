import { useApi } from '@backstage/core-plugin-api';
import type { FleetEvent, Revision } from '@cnp/plugin-fleet-common';
import { useEffect, useState } from 'react';
import { fleetApiRef } from '../../api';

export interface DeploymentHistory {
  /** Newest first. */
  revisions: Revision[];
  /** Empty unless asked for. */
  events: FleetEvent[];
}

/** Loads a deployment's revisions, and its events when `withEvents`, once per deployment. */
export function useDeploymentHistory(
  deploymentId: string,
  withEvents: boolean,
): { value?: DeploymentHistory; error?: Error; loading: boolean } {
  const api = useApi(fleetApiRef);
  const [state, setState] = useState<{
    value?: DeploymentHistory;
    error?: Error;
    loading: boolean;
  }>({ loading: true });
  useEffect(() => {
    let cancelled = false;
    setState({ loading: true });
    Promise.all([
      api.listRevisions(deploymentId),
      withEvents ? api.listDeploymentEvents(deploymentId) : [],
    ]).then(
      ([revisions, events]) => {
        if (!cancelled)
          setState({ loading: false, value: { revisions, events } });
      },
      error => {
        if (!cancelled) setState({ loading: false, error });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [api, deploymentId, withEvents]);
  return state;
}
