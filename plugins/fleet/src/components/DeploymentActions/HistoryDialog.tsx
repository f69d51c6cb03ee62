import { Progress, ResponseErrorPanel } from '@backstage/core-components';
import type { Deployment, Revision } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Checkbox from '@material-ui/core/Checkbox';
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
import { ManifestSourceText } from '../ManifestPreview';
import { useTableStyles } from '../tables';
import { RelativeTime } from '../RelativeTime';
import { deploymentReasonText } from '../StatusChip';
import { useDeploymentHistory } from './useDeploymentHistory';
import { usePermission } from '@backstage/plugin-permission-react';
import { fleetDeploymentCreatePermission } from '@cnp/plugin-fleet-common';
import { useRef, useState } from 'react';
import { PermittedButton } from './DeploymentActions';
import { RevisionDiff } from './RevisionDiff';
import { RollbackDialog } from './RollbackDialog';
import { ActorName } from '../EntityName';

/** How a revision's rollout ended, with the reason in words; "in progress" while it runs. */
export function revisionOutcome(revision: Revision): string {
  const outcome = revision.outcome ?? 'in progress';
  return revision.outcomeReason
    ? `${outcome} — ${deploymentReasonText(revision.outcomeReason)}`
    : outcome;
}

/** An image whole on one line, cut with an ellipsis past `maxWidth`, all of it on hover. */
function ImageText(props: { image: string }) {
  return (
    <code
      title={props.image}
      style={{
        whiteSpace: 'nowrap',
        overflow: 'hidden',
        textOverflow: 'ellipsis',
        display: 'inline-block',
        maxWidth: '28ch',
        verticalAlign: 'bottom',
      }}
    >
      {props.image}
    </code>
  );
}

/**
 * What a revision runs: for a component with its own manifests the source they came from
 * (version and commit, linked to the URL read) and the image if one was given; else the image.
 */
export function RevisionContent(props: { revision: Revision }) {
  const { source, image } = props.revision;
  if (!source) return <ImageText image={image} />;
  return (
    <>
      <ManifestSourceText source={source} />
      {image && (
        <>
          {' · '}
          <ImageText image={image} />
        </>
      )}
    </>
  );
}

const columns = [
  'Revision',
  'Image or source',
  'Cause',
  'By',
  'When',
  'Outcome',
  '',
];

function RevisionTable(props: {
  revisions: Revision[];
  current: number;
  componentName: string;
  entityRef: string;
  onRollBack: (revision: number) => void;
  /** The revisions picked to compare (two at most). */
  compared: number[];
  onCompare: (revision: number) => void;
}) {
  const classes = useTableStyles();
  const canRollBack = usePermission({
    permission: fleetDeploymentCreatePermission,
    resourceRef: props.entityRef,
  });
  if (props.revisions.length === 0)
    return <Typography variant="body2">No revisions yet.</Typography>;
  return (
    <Box className={classes.scroll}>
      <Table size="small" aria-label="Revisions" className={classes.table}>
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
              <TableCell className={classes.nowrap}>
                <Checkbox
                  size="small"
                  checked={props.compared.includes(r.revision)}
                  onChange={() => props.onCompare(r.revision)}
                  inputProps={{
                    'aria-label': `Compare revision ${r.revision}`,
                  }}
                />
                {r.revision}
                {r.revision === props.current && ' (current)'}
              </TableCell>
              <TableCell>
                <RevisionContent revision={r} />
              </TableCell>
              <TableCell>{r.cause}</TableCell>
              <TableCell>
                <ActorName actor={r.createdBy} />
              </TableCell>
              <TableCell>
                <RelativeTime value={r.createdAt} />
              </TableCell>
              <TableCell>{revisionOutcome(r)}</TableCell>
              <TableCell className={classes.nowrap}>
                {r.revision !== props.current && (
                  <PermittedButton
                    size="small"
                    permission={canRollBack}
                    deniedText={`You are not allowed to roll back ${props.componentName}`}
                    onClick={() => props.onRollBack(r.revision)}
                    aria-label={`Roll back to revision ${r.revision}`}
                  >
                    Roll back to this
                  </PermittedButton>
                )}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </Box>
  );
}

/** A deployment's revisions, newest first, and its status changes. */
export function HistoryDialog(props: {
  deployment: Deployment;
  componentName: string;
  onClose: () => void;
  /** After a rollback started from a row. */
  onDone?: () => void;
}) {
  const { deployment } = props;
  const { value, error, loading } = useDeploymentHistory(deployment.id, true);
  const [rollbackTo, setRollbackTo] = useState<number>();
  const rolledBack = useRef(false);
  // The two revisions compared: picking a third drops the older pick.
  const [compared, setCompared] = useState<number[]>([]);
  const toggleCompare = (revision: number) =>
    setCompared(picked =>
      picked.includes(revision)
        ? picked.filter(r => r !== revision)
        : [...picked, revision].slice(-2),
    );
  const comparedRevisions = (value?.revisions ?? []).filter(r =>
    compared.includes(r.revision),
  );
  if (rollbackTo !== undefined)
    return (
      <RollbackDialog
        deployment={deployment}
        componentName={props.componentName}
        initialRevision={rollbackTo}
        // Cancel goes back to the history; once rolled back, the history closes too.
        onClose={() =>
          rolledBack.current ? props.onClose() : setRollbackTo(undefined)
        }
        onDone={() => {
          rolledBack.current = true;
          props.onDone?.();
        }}
      />
    );
  let content;
  if (loading) content = <Progress />;
  else if (error) content = <ResponseErrorPanel error={error} />;
  else if (value)
    content = (
      <>
        <RevisionTable
          revisions={value.revisions}
          current={deployment.revision}
          componentName={props.componentName}
          entityRef={deployment.entityRef}
          onRollBack={setRollbackTo}
          compared={compared}
          onCompare={toggleCompare}
        />
        <Box mt={2} data-testid="revision-diff">
          {comparedRevisions.length === 2 ? (
            <RevisionDiff
              revisions={[comparedRevisions[0], comparedRevisions[1]]}
            />
          ) : (
            <Typography variant="caption" color="textSecondary">
              Tick two revisions to see what changed between them.
            </Typography>
          )}
        </Box>
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
