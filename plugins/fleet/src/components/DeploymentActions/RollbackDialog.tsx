import { Progress, ResponseErrorPanel } from '@backstage/core-components';
import { useApi } from '@backstage/core-plugin-api';
import type { Deployment, Revision } from '@cnp/plugin-fleet-common';
import FormControlLabel from '@material-ui/core/FormControlLabel';
import Radio from '@material-ui/core/Radio';
import RadioGroup from '@material-ui/core/RadioGroup';
import Typography from '@material-ui/core/Typography';
import { useEffect, useState } from 'react';
import { fleetApiRef } from '../../api';
import { RelativeTime } from '../RelativeTime';
import { ConfirmDialog } from '../ConfirmDialog';
import { RevisionContent, revisionOutcome } from './HistoryDialog';
import { useDeploymentHistory } from './useDeploymentHistory';
import { actorText } from '../EntityName';

/** What the API rolls back to when not told: the newest earlier revision that was DEPLOYED. */
export function defaultRollbackTarget(
  revisions: Revision[],
  current: number,
): number | undefined {
  return revisions.find(r => r.revision < current && r.outcome === 'DEPLOYED')
    ?.revision;
}

/**
 * Rolls a deployment back to a revision picked from its history: the newest earlier DEPLOYED one
 * unless the user picks another; the current revision cannot be picked.
 */
export function RollbackDialog(props: {
  deployment: Deployment;
  componentName: string;
  /** The revision picked when the dialog opens (a row's "Roll back to this"); else the default. */
  initialRevision?: number;
  onClose: () => void;
  onDone: () => void;
}) {
  const { deployment, onDone } = props;
  const api = useApi(fleetApiRef);
  const { value, error, loading } = useDeploymentHistory(deployment.id, false);
  const [picked, setPicked] = useState<number | undefined>();
  useEffect(() => {
    if (value)
      setPicked(
        props.initialRevision ??
          defaultRollbackTarget(value.revisions, deployment.revision),
      );
    // Pick the default once the history is there, not again when the row refreshes.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [value]);

  let content;
  if (loading) content = <Progress />;
  else if (error) content = <ResponseErrorPanel error={error} />;
  else if (value)
    content = (
      <>
        {defaultRollbackTarget(value.revisions, deployment.revision) ===
          undefined && (
          <Typography variant="body2" gutterBottom>
            No earlier revision was DEPLOYED; pick one only if you know it
            works.
          </Typography>
        )}
        <RadioGroup
          aria-label="Revision to roll back to"
          value={picked === undefined ? '' : String(picked)}
          onChange={e => setPicked(Number(e.target.value))}
        >
          {value.revisions.map(r => (
            <FormControlLabel
              key={r.revision}
              value={String(r.revision)}
              disabled={r.revision === deployment.revision}
              control={<Radio />}
              label={
                <>
                  <Typography variant="body2">
                    Revision {r.revision}
                    {r.revision === deployment.revision && ' (current)'}:{' '}
                    <RevisionContent revision={r} />
                  </Typography>
                  <Typography variant="caption" color="textSecondary">
                    {revisionOutcome(r)} · {r.cause} by {actorText(r.createdBy)}{' '}
                    · <RelativeTime value={r.createdAt} />
                  </Typography>
                </>
              }
            />
          ))}
        </RadioGroup>
      </>
    );

  return (
    <ConfirmDialog
      title={`Roll back ${props.componentName} on ${deployment.cluster}?`}
      confirmLabel={
        picked === undefined ? 'Roll back' : `Roll back to revision ${picked}`
      }
      confirmDisabled={picked === undefined}
      onConfirm={async () => {
        await api.rollback(deployment.id, picked);
        onDone();
      }}
      onClose={props.onClose}
    >
      {content}
    </ConfirmDialog>
  );
}
