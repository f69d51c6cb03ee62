import type { Release } from '@cnp/plugin-fleet-common';
import Checkbox from '@material-ui/core/Checkbox';
import FormControlLabel from '@material-ui/core/FormControlLabel';
import TextField from '@material-ui/core/TextField';
import Typography from '@material-ui/core/Typography';
import { useApi } from '@backstage/core-plugin-api';
import { useState } from 'react';
import { fleetApiRef } from '../../api';
import { ConfirmDialog } from '../ConfirmDialog';
import { approvalText } from './gateText';

/** What the user decides on a waiting release. */
export type Decision = 'approve' | 'reject';

/**
 * Approve or reject a waiting release, with an optional comment. Approving a release a freeze
 * window holds overrides the window, so the override must be ticked to approve it (the API
 * refuses the approval without it); approving one a window may hold once approved offers it.
 * The API's refusal (a 403 for the author or someone outside the approver groups) is shown in
 * its own words.
 */
export function DecisionDialog(props: {
  decision: Decision;
  release: Release;
  componentName: string;
  onClose: () => void;
  onDecided: () => void;
}) {
  const { decision, release } = props;
  const api = useApi(fleetApiRef);
  const [comment, setComment] = useState('');
  const [overrideFreeze, setOverrideFreeze] = useState(false);
  const approving = decision === 'approve';
  const held = release.status === 'WAITING_FOR_WINDOW';
  const frozen = held || !!release.gate?.window;

  const confirm = async () => {
    const text = comment.trim();
    if (approving) {
      await api.approveRelease(release.id, {
        ...(text !== '' && { comment: text }),
        ...(frozen && overrideFreeze && { overrideFreeze: true }),
      });
    } else {
      await api.rejectRelease(release.id, {
        ...(text !== '' && { comment: text }),
      });
    }
    props.onDecided();
  };

  return (
    <ConfirmDialog
      title={`${approving ? 'Approve' : 'Reject'} the release of ${
        props.componentName
      }`}
      confirmLabel={approving ? 'Approve' : 'Reject'}
      confirmDisabled={approving && held && !overrideFreeze}
      onConfirm={confirm}
      onClose={props.onClose}
    >
      <Typography variant="body2" gutterBottom>
        {approving
          ? approvalText(release)
          : 'The release ends rejected: nothing is applied to its clusters.'}
      </Typography>
      <TextField
        fullWidth
        multiline
        minRows={2}
        margin="normal"
        variant="outlined"
        label="Comment (optional)"
        value={comment}
        onChange={e => setComment(e.target.value)}
        inputProps={{ 'aria-label': 'Comment', maxLength: 2000 }}
      />
      {approving && frozen && (
        <FormControlLabel
          control={
            <Checkbox
              checked={overrideFreeze}
              onChange={e => setOverrideFreeze(e.target.checked)}
              color="primary"
            />
          }
          label="Override the freeze window"
        />
      )}
    </ConfirmDialog>
  );
}
