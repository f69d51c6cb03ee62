import { useApi } from '@backstage/core-plugin-api';
import { useEffect, useState } from 'react';
import { apiErrorMessage, fleetApiRef } from '../../api';

/** The Prometheus server the example strategy's analysis queries, as the backend allows it. */
export interface AnalysisAddress {
  loading: boolean;
  /** The first server `fleet.analysis.prometheus.allowedAddresses` lists; none: no analysis. */
  address?: string;
  error?: string;
}

/** Reads the analysis providers each time `active` turns on. */
export function useAnalysisAddress(active: boolean): AnalysisAddress {
  const api = useApi(fleetApiRef);
  const [state, setState] = useState<AnalysisAddress>({ loading: true });
  useEffect(() => {
    if (!active) return undefined;
    let cancelled = false;
    setState({ loading: true });
    api.listAnalysisProviders().then(
      providers => {
        if (cancelled) return;
        const prometheus = providers.find(p => p.type === 'prometheus');
        setState({ loading: false, address: prometheus?.addresses?.[0] });
      },
      error => {
        if (!cancelled)
          setState({ loading: false, error: apiErrorMessage(error) });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [api, active]);
  return state;
}

/** What the strategy's helper text says of the example's analysis. */
export function analysisHelperText(analysis: AnalysisAddress): string {
  if (analysis.loading)
    return 'Reading the analysis providers the backend allows…';
  if (analysis.error)
    return `Could not read the analysis providers the backend allows (${analysis.error}): the example has no analysis`;
  if (analysis.address)
    return `The example's analysis queries ${analysis.address}, the Prometheus the backend allows (fleet.analysis.prometheus.allowedAddresses)`;
  return 'The example has no analysis: the backend allows no Prometheus server (fleet.analysis.prometheus.allowedAddresses)';
}
