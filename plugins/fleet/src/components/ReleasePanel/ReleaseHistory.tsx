import type { Release } from '@cnp/plugin-fleet-common';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Typography from '@material-ui/core/Typography';
import Box from '@material-ui/core/Box';
import Button from '@material-ui/core/Button';
import { useState } from 'react';
import { ReleaseDetailsDialog } from './ReleaseDetailsDialog';
import { RelativeTime } from '../RelativeTime';
import { useTableStyles } from '../tables';
import { releasedText } from './releaseText';
import { ActorName, actorText } from '../EntityName';

const outcomeText: Partial<Record<Release['status'], string>> = {
  COMPLETED: 'Completed',
  FAILED: 'Failed',
  ROLLED_BACK: 'Rolled back',
  REJECTED: 'Rejected',
};

/** Who rejected a rejected release, and why. */
function rejectionText(release: Release): string {
  const rejection = release.gate?.decisions.find(
    d => d.decision === 'REJECTED',
  );
  if (!rejection) return '';
  return `Rejected by ${actorText(rejection.actor)}${
    rejection.comment ? `: “${rejection.comment}”` : ''
  }`;
}

/** Finished releases, newest first: outcome, image or version, when, by whom and, when rolled back, why. */
export function ReleaseHistory(props: { releases: Release[] }) {
  const classes = useTableStyles();
  const [opened, setOpened] = useState<Release>();
  if (props.releases.length === 0) return null;
  return (
    <>
      <Typography variant="subtitle2" component="h3">
        Release history
      </Typography>
      <Box className={classes.scroll}>
        <Table
          size="small"
          aria-label="Release history"
          className={classes.table}
        >
          <TableHead>
            <TableRow>
              <TableCell>Outcome</TableCell>
              <TableCell>Released</TableCell>
              <TableCell>When</TableCell>
              <TableCell>By</TableCell>
              <TableCell>Details</TableCell>
              <TableCell />
            </TableRow>
          </TableHead>
          <TableBody>
            {props.releases.map(r => (
              <TableRow key={r.id} data-release={r.id}>
                <TableCell>{outcomeText[r.status] ?? r.status}</TableCell>
                <TableCell>
                  <code className={classes.nowrap}>
                    {releasedText(r) ?? '—'}
                  </code>
                </TableCell>
                <TableCell className={classes.nowrap}>
                  <RelativeTime value={r.createdAt} />
                </TableCell>
                <TableCell className={classes.nowrap}>
                  <ActorName actor={r.createdBy} />
                </TableCell>
                <TableCell>
                  {r.stage && `Stage ${r.stage}. `}
                  {r.status === 'REJECTED'
                    ? rejectionText(r)
                    : r.progress?.abort?.message ??
                      (r.progress ? 'progressive' : '')}
                  {r.skipped.length > 0 &&
                    ` Skipped: ${r.skipped.map(s => s.cluster).join(', ')}`}
                </TableCell>
                <TableCell>
                  <Button
                    size="small"
                    onClick={() => setOpened(r)}
                    aria-label={`Open the release of ${
                      releasedText(r) ?? 'the current image'
                    }`}
                  >
                    Open
                  </Button>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </Box>
      {opened && (
        <ReleaseDetailsDialog
          release={opened}
          onClose={() => setOpened(undefined)}
        />
      )}
    </>
  );
}
