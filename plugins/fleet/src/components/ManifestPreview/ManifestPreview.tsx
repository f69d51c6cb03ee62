import type {
  ClusterPreview,
  Preview,
  PreviewObject,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Button from '@material-ui/core/Button';
import Chip from '@material-ui/core/Chip';
import CircularProgress from '@material-ui/core/CircularProgress';
import LinearProgress from '@material-ui/core/LinearProgress';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Typography from '@material-ui/core/Typography';
import AddCircleOutlineIcon from '@material-ui/icons/AddCircleOutline';
import CheckIcon from '@material-ui/icons/Check';
import DeleteOutlineIcon from '@material-ui/icons/DeleteOutline';
import EditIcon from '@material-ui/icons/Edit';
import VisibilityIcon from '@material-ui/icons/Visibility';
import Alert from '@material-ui/lab/Alert';
import type { ReactElement } from 'react';
import { useTableStyles } from '../tables';
import { ManifestSourceText } from './ManifestSourceText';
import type { PreviewState } from './usePreview';

type Action = PreviewObject['action'];

const actions: Record<
  Action,
  { label: string; count: string; icon: ReactElement }
> = {
  create: {
    label: 'will be created',
    count: 'to create',
    icon: <AddCircleOutlineIcon />,
  },
  update: { label: 'will be updated', count: 'to update', icon: <EditIcon /> },
  unchanged: { label: 'unchanged', count: 'unchanged', icon: <CheckIcon /> },
  prune: {
    label: 'will be pruned',
    count: 'to prune',
    icon: <DeleteOutlineIcon />,
  },
};

/** What a deploy would do to one object, in words. */
export function actionText(action: Action): string {
  return actions[action]?.label ?? action;
}

/** Whether a deploy after this preview would apply anything: some cluster was previewed. */
export function hasPreviewedCluster(preview: Preview): boolean {
  return preview.clusters.some(c => c.status === 'previewed');
}

function summary(cluster: ClusterPreview): string {
  if (cluster.status === 'refused') return 'refused: nothing would be applied';
  if (cluster.status === 'unreachable') return 'unreachable';
  if (cluster.objects.length === 0) return 'nothing to apply';
  const counts = new Map<Action, number>();
  for (const o of cluster.objects)
    counts.set(o.action, (counts.get(o.action) ?? 0) + 1);
  return (Object.keys(actions) as Action[])
    .filter(a => counts.has(a))
    .map(a => `${counts.get(a)} ${actions[a].count}`)
    .join(', ');
}

function ObjectTable(props: { cluster: ClusterPreview }) {
  const classes = useTableStyles();
  const { cluster } = props;
  return (
    <Box className={classes.scroll}>
      <Table
        size="small"
        aria-label={`Preview of ${cluster.cluster}`}
        className={classes.table}
      >
        <TableHead>
          <TableRow>
            <TableCell>Kind</TableCell>
            <TableCell>Name</TableCell>
            <TableCell>Namespace</TableCell>
            <TableCell>Action</TableCell>
            <TableCell>Changed paths</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {cluster.objects.map(o => (
            <TableRow
              key={`${o.apiVersion}/${o.kind}/${o.namespace ?? ''}/${o.name}`}
              data-action={o.action}
            >
              <TableCell className={classes.nowrap}>{o.kind}</TableCell>
              <TableCell className={classes.nowrap}>
                <code className={classes.nowrap}>{o.name}</code>
              </TableCell>
              <TableCell className={classes.nowrap}>
                {o.namespace ? (
                  <code className={classes.nowrap}>{o.namespace}</code>
                ) : (
                  '—'
                )}
              </TableCell>
              <TableCell>
                <Chip
                  size="small"
                  variant="outlined"
                  icon={actions[o.action]?.icon}
                  label={actionText(o.action)}
                />
              </TableCell>
              <TableCell>
                {o.paths.length > 0 ? (
                  <Box
                    component="ul"
                    m={0}
                    p={0}
                    style={{ listStyle: 'none' }}
                    aria-label={`Changed paths of ${o.kind} ${o.name}`}
                  >
                    {o.paths.map(path => (
                      <li key={path}>
                        <code className={classes.nowrap}>{path}</code>
                      </li>
                    ))}
                  </Box>
                ) : (
                  '—'
                )}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </Box>
  );
}

function ClusterSection(props: { cluster: ClusterPreview }) {
  const classes = useTableStyles();
  const { cluster } = props;
  return (
    <Box mt={2} component="section" aria-label={`Cluster ${cluster.cluster}`}>
      <Typography variant="subtitle2" component="h3">
        <span className={classes.nowrap}>{cluster.cluster}</span>:{' '}
        {summary(cluster)}
      </Typography>
      {cluster.status !== 'previewed' && (
        <Alert
          severity={cluster.status === 'refused' ? 'error' : 'warning'}
          aria-label={`${cluster.cluster} ${cluster.status}`}
        >
          {cluster.message ??
            (cluster.status === 'refused'
              ? 'Fleet would refuse this deploy here.'
              : 'Fleet could not reach this cluster.')}
        </Alert>
      )}
      {cluster.objects.length > 0 && <ObjectTable cluster={cluster} />}
    </Box>
  );
}

/**
 * What a deploy or release would change, as the API's dry run answered: the source of the
 * manifests, and per cluster a table of its objects (kind, name, namespace, what happens to it,
 * the changed paths of an update); a refused or unreachable cluster shows the API's message.
 * Names and codes never break over lines: a wide table scrolls.
 */
export function ManifestPreview(props: { preview: Preview }) {
  const { preview } = props;
  return (
    <Box aria-label="Preview" component="section">
      {preview.source && (
        <Typography variant="body2">
          Manifests: <ManifestSourceText source={preview.source} /> (
          {preview.source.objectCount}{' '}
          {preview.source.objectCount === 1 ? 'object' : 'objects'})
        </Typography>
      )}
      {preview.clusters.length === 0 && (
        <Typography variant="body2">No cluster to preview.</Typography>
      )}
      {preview.clusters.map(c => (
        <ClusterSection key={c.cluster} cluster={c} />
      ))}
    </Box>
  );
}

/** The preview step of a dialog: progress while the preview loads, the API's error, or it. */
export function PreviewPanel(props: { state: PreviewState }) {
  const { state } = props;
  if (state.loading)
    return (
      <Box my={2}>
        <Typography variant="body2" gutterBottom>
          Previewing what would change…
        </Typography>
        <LinearProgress aria-label="Loading the preview" />
      </Box>
    );
  if (state.error)
    return (
      <Alert severity="error" role="alert" style={{ marginTop: 16 }}>
        Could not preview: {state.error}
      </Alert>
    );
  if (state.preview) return <ManifestPreview preview={state.preview} />;
  return null;
}

/**
 * The Preview button of the Deploy and Release dialogs: a spinner while the preview loads;
 * `primary` while a preview is what the dialog needs next.
 */
export function PreviewButton(props: {
  state: PreviewState;
  disabled?: boolean;
  primary?: boolean;
  onClick: () => void;
}) {
  const { state } = props;
  return (
    <Button
      type="button"
      color={props.primary ? 'primary' : 'default'}
      variant="outlined"
      onClick={props.onClick}
      disabled={props.disabled || state.loading}
      startIcon={
        state.loading ? <CircularProgress size={16} /> : <VisibilityIcon />
      }
    >
      Preview
    </Button>
  );
}
