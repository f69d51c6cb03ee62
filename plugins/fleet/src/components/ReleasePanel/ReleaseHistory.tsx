import type { Release } from '@cnp/plugin-fleet-common';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Typography from '@material-ui/core/Typography';
import Box from '@material-ui/core/Box';
import { RelativeTime } from '../RelativeTime';
import { useTableStyles } from '../tables';

const outcomeText: Partial<Record<Release['status'], string>> = {
  COMPLETED: 'Completed',
  FAILED: 'Failed',
  ROLLED_BACK: 'Rolled back',
};

/** Finished releases, newest first: outcome, image, when, by whom and, when rolled back, why. */
export function ReleaseHistory(props: { releases: Release[] }) {
  const classes = useTableStyles();
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
              <TableCell>Image</TableCell>
              <TableCell>When</TableCell>
              <TableCell>By</TableCell>
              <TableCell>Details</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {props.releases.map(r => (
              <TableRow key={r.id} data-release={r.id}>
                <TableCell>{outcomeText[r.status] ?? r.status}</TableCell>
                <TableCell>
                  <code className={classes.nowrap}>{r.image ?? '—'}</code>
                </TableCell>
                <TableCell className={classes.nowrap}>
                  <RelativeTime value={r.createdAt} />
                </TableCell>
                <TableCell className={classes.nowrap}>{r.createdBy}</TableCell>
                <TableCell>
                  {r.progress?.abort?.message ??
                    (r.progress ? 'progressive' : '')}
                  {r.skipped.length > 0 &&
                    ` Skipped: ${r.skipped.map(s => s.cluster).join(', ')}`}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </Box>
    </>
  );
}
