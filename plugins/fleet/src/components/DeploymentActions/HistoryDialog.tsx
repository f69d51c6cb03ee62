import { Progress, ResponseErrorPanel } from '@backstage/core-components';
import type { Deployment, Revision } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Button from '@material-ui/core/Button';
import Dialog from '@material-ui/core/Dialog';
import DialogActions from '@material-ui/core/DialogActions';
import DialogContent from '@material-ui/core/DialogContent';
import DialogTitle from '@material-ui/core/DialogTitle';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Typography from '@material-ui/core/Typography';
import { EventList } from '../EventList';
import { RelativeTime } from '../RelativeTime';
import { deploymentReasonText } from '../StatusChip';
import { useDeploymentHistory } from './useDeploymentHistory';

/** How a revision's rollout ended, with the reason in words; "in progress" while it runs. */
export function revisionOutcome(revision: Revision): string {
  const outcome = revision.outcome ?? 'in progress';
  return revision.outcomeReason
    ? `${outcome} — ${deploymentReasonText(revision.outcomeReason)}`
    : outcome;
}

const columns = ['Revision', 'Image', 'Cause', 'By', 'When', 'Outcome'];

function RevisionTable(props: { revisions: Revision[]; current: number }) {
  if (props.revisions.length === 0)
    return <Typography variant="body2">No revisions yet.</Typography>;
  return (
    <Table size="small" aria-label="Revisions">
      <TableHead>
        <TableRow>
          {columns.map(column => (
            <TableCell key={column}>{column}</TableCell>
          ))}
        </TableRow>
      </TableHead>
      <TableBody>
        {props.revisions.map(r => (
          <TableRow key={r.revision}>
            <TableCell>
              {r.revision}
              {r.revision === props.current && ' (current)'}
            </TableCell>
            <TableCell>
              <code>{r.image}</code>
            </TableCell>
            <TableCell>{r.cause}</TableCell>
            <TableCell>{r.createdBy}</TableCell>
            <TableCell>
              <RelativeTime value={r.createdAt} />
            </TableCell>
            <TableCell>{revisionOutcome(r)}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

/** A deployment's revisions, newest first, and its status changes. */
export function HistoryDialog(props: {
  deployment: Deployment;
  componentName: string;
  onClose: () => void;
}) {
  const { deployment } = props;
  const { value, error, loading } = useDeploymentHistory(deployment.id, true);
  let content;
  if (loading) content = <Progress />;
  else if (error) content = <ResponseErrorPanel error={error} />;
  else if (value)
    content = (
      <>
        <RevisionTable
          revisions={value.revisions}
          current={deployment.revision}
        />
        <Box mt={3}>
          <Typography variant="h6" component="h3">
            Events
          </Typography>
          <EventList
            events={value.events}
            emptyText="No status changes for this deployment yet."
          />
        </Box>
      </>
    );
  return (
    <Dialog
      open
      onClose={props.onClose}
      fullWidth
      maxWidth="md"
      aria-labelledby="fleet-history-title"
    >
      <DialogTitle id="fleet-history-title">
        History of {props.componentName} on {deployment.cluster}
      </DialogTitle>
      <DialogContent>{content}</DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>Close</Button>
      </DialogActions>
    </Dialog>
  );
}
