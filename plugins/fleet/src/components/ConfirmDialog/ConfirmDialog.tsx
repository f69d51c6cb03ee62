import Button from '@material-ui/core/Button';
import CircularProgress from '@material-ui/core/CircularProgress';
import Dialog from '@material-ui/core/Dialog';
import DialogActions from '@material-ui/core/DialogActions';
import DialogContent from '@material-ui/core/DialogContent';
import DialogTitle from '@material-ui/core/DialogTitle';
import Alert from '@material-ui/lab/Alert';
import { ReactNode, useState } from 'react';
import { apiErrorMessage } from '../../api';

/**
 * Cancel and a confirm button for a dialog whose call may take a while: both are disabled while
 * it runs, the confirm button showing a spinner. Without `onConfirm`, confirm submits the form.
 * `secondary` (e.g. a Preview button) stands between them.
 */
export function DialogButtons(props: {
  submitting: boolean;
  onCancel: () => void;
  confirmLabel: string;
  confirmDisabled?: boolean;
  onConfirm?: () => void;
  secondary?: ReactNode;
}) {
  const { submitting } = props;
  return (
    <DialogActions>
      <Button onClick={props.onCancel} disabled={submitting}>
        Cancel
      </Button>
      {props.secondary}
      <Button
        type={props.onConfirm ? 'button' : 'submit'}
        color="primary"
        variant="contained"
        onClick={props.onConfirm}
        disabled={submitting || props.confirmDisabled}
        startIcon={submitting ? <CircularProgress size={16} /> : undefined}
      >
        {props.confirmLabel}
      </Button>
    </DialogActions>
  );
}

/**
 * A dialog that asks before a change: `onConfirm` runs on the confirm button, the dialog closes
 * when it succeeds and shows the API's own words when it fails.
 */
export function ConfirmDialog(props: {
  title: string;
  confirmLabel: string;
  confirmDisabled?: boolean;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  children: ReactNode;
}) {
  const { onConfirm, onClose } = props;
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<string | undefined>();

  const confirm = async () => {
    setSubmitting(true);
    setError(undefined);
    try {
      await onConfirm();
      onClose();
    } catch (e) {
      setError(apiErrorMessage(e));
      setSubmitting(false);
    }
  };

  return (
    <Dialog
      open
      onClose={() => {
        if (!submitting) onClose(); // keep the dialog, and the API's answer, while the call runs
      }}
      fullWidth
      maxWidth="sm"
      aria-labelledby="fleet-confirm-title"
    >
      <DialogTitle id="fleet-confirm-title">{props.title}</DialogTitle>
      <DialogContent>
        {error && (
          <Alert severity="error" role="alert" style={{ marginBottom: 16 }}>
            {error}
          </Alert>
        )}
        {props.children}
      </DialogContent>
      <DialogButtons
        submitting={submitting}
        onCancel={onClose}
        confirmLabel={props.confirmLabel}
        confirmDisabled={props.confirmDisabled}
        onConfirm={confirm}
      />
    </Dialog>
  );
}
