import { useApi } from '@backstage/core-plugin-api';
import type { Release } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Typography from '@material-ui/core/Typography';
import Alert from '@material-ui/lab/Alert';
import { useState } from 'react';
import { apiErrorMessage, fleetApiRef, type FleetApi } from '../../api';
import { ConfirmDialog } from '../ConfirmDialog';
import { PermittedButton, type PermissionState } from '../DeploymentActions';

type Action = 'promote' | 'pause' | 'resume' | 'abort';

const calls: Record<Action, (api: FleetApi, id: string) => Promise<Release>> = {
  promote: (api, id) => api.promoteRelease(id),
  pause: (api, id) => api.pauseRelease(id),
  resume: (api, id) => api.resumeRelease(id),
  abort: (api, id) => api.abortRelease(id),
};

/**
 * Promote, Pause or Resume, and Abort release (after a confirmation) for a running progressive
 * release. Disabled, with the reason, without `fleet.release.manage`; a refusal is shown in the
 * API's words, a success refreshes the card.
 */
export function ReleaseControls(props: {
  release: Release;
  componentName: string;
  permission: PermissionState;
  onChanged: () => void;
}) {
  const { release, permission, onChanged } = props;
  const api = useApi(fleetApiRef);
  const [busy, setBusy] = useState<Action>();
  const [error, setError] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const deniedText = `You are not allowed to release ${props.componentName}`;
  const aborting = release.status === 'ABORTING';
  // Promote moves on the clusters of the current wave that are in a pause step; there must be
  // one, and the release must be running (a paused release is resumed first).
  const steps = release.strategy?.canary?.steps ?? [];
  const progress = release.progress;
  const promotable =
    release.status === 'PROGRESSING' &&
    !!progress?.clusters.some(
      c =>
        c.wave === progress.currentWave &&
        c.state === 'RUNNING' &&
        c.stepIndex < steps.length &&
        'pause' in steps[c.stepIndex],
    );

  const run = async (action: Action) => {
    setBusy(action);
    setError(undefined);
    try {
      await calls[action](api, release.id);
      onChanged();
    } catch (e) {
      setError(apiErrorMessage(e));
    } finally {
      setBusy(undefined);
    }
  };

  const button = (action: Action, label: string, enabled = true) => (
    <PermittedButton
      size="small"
      variant="outlined"
      permission={permission}
      deniedText={deniedText}
      disabled={!enabled || aborting || busy !== undefined}
      onClick={() => (action === 'abort' ? setConfirming(true) : run(action))}
    >
      {label}
    </PermittedButton>
  );

  return (
    <Box mb={1}>
      <Box display="flex" flexWrap="wrap" style={{ gap: 8 }}>
        {button('promote', 'Promote', promotable)}
        {release.status === 'PAUSED'
          ? button('resume', 'Resume')
          : button('pause', 'Pause')}
        {button('abort', 'Abort release')}
      </Box>
      {error && (
        <Alert severity="error" role="alert" style={{ marginTop: 8 }}>
          {error}
        </Alert>
      )}
      {confirming && (
        <ConfirmDialog
          title={`Abort the release of ${props.componentName}?`}
          confirmLabel="Abort"
          onConfirm={async () => {
            await api.abortRelease(release.id);
            onChanged();
          }}
          onClose={() => setConfirming(false)}
        >
          <Typography>
            Every cluster the release reached goes back to the revision it ran
            before; clusters of later waves are not touched.
          </Typography>
        </ConfirmDialog>
      )}
    </Box>
  );
}
