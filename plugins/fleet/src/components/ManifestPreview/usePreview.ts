import { useApi } from '@backstage/core-plugin-api';
import type { Preview, PreviewRequest } from '@cnp/plugin-fleet-common';
import { useCallback, useEffect, useRef, useState } from 'react';
import { apiErrorMessage, fleetApiRef } from '../../api';

/** A dialog's preview of the inputs it holds now. */
export interface PreviewState {
  loading: boolean;
  preview?: Preview;
  /** The API's own words. */
  error?: string;
}

function keyOf(applicationId: string, request: PreviewRequest): string {
  return JSON.stringify([applicationId, request]);
}

/**
 * The preview of a deploy or release, for the inputs a dialog holds: `load` asks the API for
 * them; once the inputs change, `current` no longer holds the preview of the old ones (so a
 * dialog confirms only what it showed), and an answer to an earlier request is dropped. When the
 * dialog closes (`open` turns false) the preview is dropped too: reopened, it asks again.
 */
export function usePreview(
  applicationId: string | undefined,
  request: PreviewRequest,
  open: boolean,
) {
  const api = useApi(fleetApiRef);
  const [state, setState] = useState<PreviewState & { key?: string }>({
    loading: false,
  });
  const latest = useRef<string>();
  const key = applicationId ? keyOf(applicationId, request) : undefined;

  const load = useCallback(async () => {
    if (!applicationId) return;
    const asked = keyOf(applicationId, request);
    latest.current = asked;
    setState({ key: asked, loading: true });
    try {
      const preview = await api.previewApplication(applicationId, request);
      if (latest.current === asked)
        setState({ key: asked, loading: false, preview });
    } catch (e) {
      if (latest.current === asked)
        setState({ key: asked, loading: false, error: apiErrorMessage(e) });
    }
    // The request is compared by its key: a new object of the same inputs asks nothing new.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, applicationId, key]);

  useEffect(() => {
    if (!open) {
      latest.current = undefined;
      setState({ loading: false });
    }
  }, [open]);

  const current: PreviewState =
    key !== undefined && state.key === key ? state : { loading: false };
  return { current, load };
}
