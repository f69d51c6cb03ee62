import {
  reasonWords,
  type Deployment,
  type Release,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Typography from '@material-ui/core/Typography';
import { makeStyles } from '@material-ui/core/styles';
import { RUNNING_STATUSES } from '../ReleasePanel/releaseText';
import { useTableStyles } from '../tables';
import { releasesInFlight } from './DeploymentRows';

const useStyles = makeStyles(theme => ({
  releasing: {
    background: theme.palette.action.selected,
    fontWeight: theme.typography.fontWeightBold as number,
  },
}));

/** The column of a deployment of manifests from a repository (it names no image). */
const MANIFESTS = 'manifests';

/** A deployment's column: its image, or its manifests. */
const columnOf = (d: Deployment) => d.image ?? MANIFESTS;

/** The version an image names: its tag (or the start of its digest), else the whole reference. */
export function versionOf(image: string): string {
  if (image === MANIFESTS) return MANIFESTS;
  const [ref, digest] = image.split('@');
  if (digest) return digest.slice(0, 19);
  const last = ref.split('/').pop() ?? ref;
  const colon = last.lastIndexOf(':');
  return colon >= 0 ? last.slice(colon + 1) : 'latest';
}

/** A release under way: the image it brings, and what it does on each cluster it goes to. */
function releaseUnderWay(releases: Release[]) {
  const release = releases.find(r => RUNNING_STATUSES.includes(r.status));
  if (!release) return undefined;
  const marks = releasesInFlight([release]);
  const clusters = new Map<string, string>();
  // A target that ended (failed, superseded) says so; only one not started yet is waiting.
  for (const t of release.targets)
    clusters.set(
      t.cluster,
      marks.get(t.cluster) ??
        (t.status === 'PENDING'
          ? 'waiting'
          : reasonWords(t.status).toLowerCase()),
    );
  for (const c of release.progress?.clusters ?? [])
    clusters.set(
      c.cluster,
      marks.get(c.cluster) ?? reasonWords(c.state).toLowerCase(),
    );
  // A release of manifests names no image: nothing to highlight.
  return release.image ? { image: release.image, clusters } : undefined;
}

/**
 * Which version each cluster runs: a row per cluster the component is deployed on, a column per
 * version (the image's tag; the whole image on hover), the deployment's status where the
 * cluster runs it. The version a release is bringing is highlighted, with what the release does
 * on each of its clusters.
 */
export function VersionMatrix(props: {
  deployments: Deployment[];
  releases: Release[];
}) {
  const classes = { ...useTableStyles(), ...useStyles() };
  const underWay = releaseUnderWay(props.releases);
  const images = [
    ...new Set([
      ...props.deployments.map(columnOf),
      ...(underWay ? [underWay.image] : []),
    ]),
  ].sort((a, b) =>
    versionOf(a).localeCompare(versionOf(b), undefined, { numeric: true }),
  );
  const clusters = [...new Set(props.deployments.map(d => d.cluster))].sort();
  const runs = new Map(props.deployments.map(d => [d.cluster, d]));
  if (clusters.length === 0) return null;
  return (
    <Box mt={2} className={classes.scroll}>
      <Typography variant="overline">Versions by cluster</Typography>
      <Table size="small" aria-label="Version matrix" className={classes.table}>
        <TableHead>
          <TableRow>
            <TableCell>Cluster</TableCell>
            {images.map(image => (
              <TableCell
                key={image}
                title={image}
                className={
                  image === underWay?.image ? classes.releasing : undefined
                }
                data-releasing={image === underWay?.image || undefined}
              >
                {versionOf(image)}
                {image === underWay?.image && ' (releasing)'}
              </TableCell>
            ))}
          </TableRow>
        </TableHead>
        <TableBody>
          {clusters.map(cluster => {
            const d = runs.get(cluster)!;
            return (
              <TableRow key={cluster} data-cluster={cluster}>
                <TableCell component="th" scope="row">
                  {cluster}
                </TableCell>
                {images.map(image => {
                  const releasing = image === underWay?.image;
                  const mark = releasing
                    ? underWay?.clusters.get(cluster)
                    : undefined;
                  const text =
                    columnOf(d) === image ? reasonWords(d.status) : mark ?? '';
                  return (
                    <TableCell
                      key={image}
                      className={releasing ? classes.releasing : undefined}
                      title={columnOf(d) === image ? d.status : undefined}
                    >
                      {text}
                    </TableCell>
                  );
                })}
              </TableRow>
            );
          })}
        </TableBody>
      </Table>
    </Box>
  );
}
