import { stringifyEntityRef } from '@backstage/catalog-model';
import {
  InfoCard,
  Progress,
  ResponseErrorPanel,
} from '@backstage/core-components';
import { useApi } from '@backstage/core-plugin-api';
import { useEntity } from '@backstage/plugin-catalog-react';
import { usePermission } from '@backstage/plugin-permission-react';
import {
  annotatedClusters,
  FLEET_ANNOTATION_IMAGE,
  fleetDeploymentCreatePermission,
  fleetDeploymentDeletePermission,
  fleetReleaseManagePermission,
  type Cluster,
  type Deployment,
  fleetSignalChannels,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Tooltip from '@material-ui/core/Tooltip';
import Typography from '@material-ui/core/Typography';
import CloudUploadIcon from '@material-ui/icons/CloudUpload';
import LayersIcon from '@material-ui/icons/Layers';
import { useState } from 'react';
import { fleetApiRef } from '../../api';
import { usePolling } from '../../hooks/usePolling';
import {
  DeploymentActionDialog,
  DeploymentActions,
  PermittedButton,
  type DeploymentAction,
  type PermissionState,
} from '../DeploymentActions';
import { DeployDialog } from '../DeployDialog';
import { useTableStyles } from '../tables';
import { ReleaseDialog } from '../ReleaseDialog';
import { ReleasePanel } from '../ReleasePanel';
import { RelativeTime } from '../RelativeTime';
import {
  ClusterStatusChip,
  DeploymentStatusChip,
  ReasonText,
  SyncStatusChip,
} from '../StatusChip';
import { ClusterLink } from '../ClusterLink';
import { fleetView } from './fleetView';
import { loadDeploymentsCard } from './loadDeploymentsCard';
import { useEveryCluster } from './useEveryCluster';

/** The clusters named by the entity's cnp.io/clusters annotation (the common reading). */
export { annotatedClusters };

/**
 * A chip per cluster the entity names (`cnp.io/clusters`); when it names none, per cluster it is
 * deployed to.
 */
function ClusterChips(props: { clusters: Cluster[]; named: string[] }) {
  const known = new Map(props.clusters.map(c => [c.name, c]));
  const shown =
    props.named.length > 0 ? props.named : props.clusters.map(c => c.name);
  if (shown.length === 0)
    return (
      <Typography variant="body2">
        No target clusters: the component names none (cnp.io/clusters) and is
        deployed to none.
      </Typography>
    );
  return (
    <Box
      display="flex"
      flexWrap="wrap"
      component="ul"
      aria-label="Clusters"
      p={0}
      m={0}
      style={{ listStyle: 'none', gap: 12 }}
    >
      {shown.map(name => {
        const cluster = known.get(name);
        return (
          <Box
            component="li"
            key={name}
            display="flex"
            alignItems="center"
            style={{ gap: 6 }}
            data-cluster={name}
          >
            <Typography variant="body2" component="span">
              {cluster ? <ClusterLink name={name} /> : name}
            </Typography>
            {cluster ? (
              <ClusterStatusChip
                status={cluster.status}
                reason={cluster.statusReason}
              />
            ) : (
              <Typography variant="caption" color="textSecondary">
                not registered in Fleet
              </Typography>
            )}
          </Box>
        );
      })}
    </Box>
  );
}

function DeploymentRows(props: {
  deployments: Deployment[];
  clusters: Cluster[];
  componentName: string;
  permissions: { rollback: PermissionState; undeploy: PermissionState };
  onAction: (action: DeploymentAction, deployment: Deployment) => void;
}) {
  const classes = useTableStyles();
  const status = new Map(props.clusters.map(c => [c.name, c]));
  return (
    <Box className={classes.scroll}>
      <Table size="small" aria-label="Deployments" className={classes.table}>
        <TableHead>
          <TableRow>
            <TableCell>Cluster</TableCell>
            <TableCell>Deployment</TableCell>
            <TableCell>Sync</TableCell>
            <TableCell>Image</TableCell>
            <TableCell>Last change</TableCell>
            <TableCell>Actions</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {props.deployments.map(d => {
            const cluster = status.get(d.cluster);
            const clusterStatus =
              cluster?.status ?? d.clusterStatus ?? 'UNKNOWN';
            return (
              <TableRow
                key={d.id}
                data-deployment={d.id}
                data-cluster={d.cluster}
              >
                <TableCell>
                  <Box display="flex" alignItems="center" style={{ gap: 6 }}>
                    <span className={classes.nowrap}>
                      <ClusterLink name={d.cluster} />
                    </span>
                    <ClusterStatusChip
                      status={clusterStatus}
                      reason={cluster?.statusReason}
                    />
                  </Box>
                  {!d.placed && (
                    <Tooltip title="The application's placement no longer selects this cluster: the deployment stays, but Fleet no longer heals it">
                      <Typography variant="caption" display="block">
                        no longer placed
                      </Typography>
                    </Tooltip>
                  )}
                </TableCell>
                <TableCell>
                  <DeploymentStatusChip status={d.status} reason={d.message} />
                  {d.statusReason && <ReasonText reason={d.statusReason} />}
                </TableCell>
                <TableCell>
                  <SyncStatusChip status={d.syncStatus} />
                  {d.syncStatus === 'OUT_OF_SYNC' &&
                    d.syncDifferences &&
                    d.syncDifferences.length > 0 && (
                      <Box
                        component="ul"
                        pl={2}
                        m={0}
                        aria-label={`Differences on ${d.cluster}`}
                      >
                        {d.syncDifferences.map(diff => (
                          <Typography
                            component="li"
                            variant="caption"
                            key={`${diff.kind}/${diff.name}${diff.path}`}
                          >
                            {diff.kind} {diff.name}:{' '}
                            {diff.path === '/' ? (
                              'missing'
                            ) : (
                              <code>{diff.path}</code>
                            )}
                          </Typography>
                        ))}
                      </Box>
                    )}
                </TableCell>
                <TableCell>
                  <code className={classes.nowrap}>{d.image ?? '—'}</code>
                </TableCell>
                <TableCell className={classes.nowrap}>
                  <RelativeTime value={d.updatedAt} />
                </TableCell>
                <TableCell>
                  <DeploymentActions
                    deployment={d}
                    componentName={props.componentName}
                    permissions={props.permissions}
                    onAction={action => props.onAction(action, d)}
                  />
                </TableCell>
              </TableRow>
            );
          })}
        </TableBody>
      </Table>
    </Box>
  );
}

/**
 * On a component's page: the state of each target cluster, one row per deployment with its
 * History, Rollback and Undeploy, and a Deploy button; the header sums up which versions run
 * where. Refreshes on its own.
 *
 * @public
 */
export function EntityFleetDeploymentsCard(props: { pollIntervalMs?: number }) {
  const { entity } = useEntity();
  const api = useApi(fleetApiRef);
  const entityRef = stringifyEntityRef(entity);
  const [dialogOpen, setDialogOpen] = useState(false);
  const [releaseOpen, setReleaseOpen] = useState(false);
  const [picked, setPicked] = useState<{
    action: DeploymentAction;
    deployment: Deployment;
  }>();
  const canDeploy = usePermission({
    permission: fleetDeploymentCreatePermission,
    resourceRef: entityRef,
  });
  const canUndeploy = usePermission({
    permission: fleetDeploymentDeletePermission,
    resourceRef: entityRef,
  });
  const canRelease = usePermission({
    permission: fleetReleaseManagePermission,
    resourceRef: entityRef,
  });
  const named = annotatedClusters(entity.metadata.annotations);
  const namedKey = named.join(',');
  const { value, error, loading, refresh } = usePolling(
    () =>
      loadDeploymentsCard(api, {
        entityRef,
        named: namedKey ? namedKey.split(',') : [],
      }),
    [api, entityRef, namedKey],
    {
      intervalMs: props.pollIntervalMs,
      // Its deployments and releases, and its clusters' chips.
      signals: {
        channels: [
          fleetSignalChannels.deploymentsOf(entityRef),
          fleetSignalChannels.releasesOf(entityRef),
          fleetSignalChannels.clusters,
        ],
      },
    },
  );
  // The dialogs offer every cluster: read when one opens, not on every poll.
  const everyCluster = useEveryCluster(api, dialogOpen || releaseOpen);
  const pickable = everyCluster.clusters;

  let content;
  if (loading && !value) {
    content = <Progress />;
  } else if (error && !value) {
    content = <ResponseErrorPanel error={error} />;
  } else if (value) {
    content = (
      <>
        {error && (
          <Typography
            variant="caption"
            color="error"
            role="status"
            display="block"
            gutterBottom
          >
            Could not refresh ({error.message}); showing the last known state.
          </Typography>
        )}
        <ClusterChips clusters={value.clusters} named={named} />
        {everyCluster.error && (
          <Typography variant="caption" color="error" display="block">
            Could not read the clusters to deploy to (
            {everyCluster.error.message}).
          </Typography>
        )}
        {(value.placementRefused ?? []).map(refusal => (
          <Typography
            key={refusal.cluster}
            variant="caption"
            color="error"
            display="block"
            data-testid="placement-refused"
          >
            Not placed on {refusal.cluster}: {refusal.reason}
          </Typography>
        ))}
        <Box mt={2}>
          {value.deployments.length === 0 ? (
            <Typography variant="body2">
              Not deployed to any cluster yet. Use Deploy to start.
            </Typography>
          ) : (
            <DeploymentRows
              deployments={value.deployments}
              clusters={value.clusters}
              componentName={entity.metadata.name}
              permissions={{ rollback: canDeploy, undeploy: canUndeploy }}
              onAction={(action, deployment) =>
                setPicked({ action, deployment })
              }
            />
          )}
        </Box>
        {value.applicationId && (
          <ReleasePanel
            releases={value.releases}
            componentName={entity.metadata.name}
            permission={canRelease}
            onChanged={refresh}
            error={value.releasesError}
          />
        )}
      </>
    );
  }

  return (
    <InfoCard
      title="Fleet deployments"
      subheader={value && fleetView(value.deployments)}
      action={
        <Box m={2} display="flex" style={{ gap: 8 }}>
          <PermittedButton
            color="primary"
            variant="outlined"
            startIcon={<LayersIcon />}
            onClick={() => setReleaseOpen(true)}
            disabled={!value?.applicationId}
            permission={canRelease}
            deniedText={`You are not allowed to release ${entity.metadata.name}`}
          >
            Release
          </PermittedButton>
          <PermittedButton
            color="primary"
            variant="contained"
            startIcon={<CloudUploadIcon />}
            onClick={() => setDialogOpen(true)}
            disabled={!value}
            permission={canDeploy}
            deniedText={`You are not allowed to deploy ${entity.metadata.name}`}
          >
            Deploy
          </PermittedButton>
        </Box>
      }
    >
      {content}
      {value && pickable && (
        <DeployDialog
          open={dialogOpen}
          entityRef={entityRef}
          clusters={pickable}
          preferredClusters={named}
          defaultImage={entity.metadata.annotations?.[FLEET_ANNOTATION_IMAGE]}
          onClose={() => setDialogOpen(false)}
          onDeployed={refresh}
          onReleased={refresh}
        />
      )}
      {value?.applicationId && pickable && (
        <ReleaseDialog
          open={releaseOpen}
          componentName={entity.metadata.name}
          applicationId={value.applicationId}
          clusters={pickable}
          placedClusters={value.deployments
            .filter(d => d.placed)
            .map(d => d.cluster)}
          defaultImage={
            entity.metadata.annotations?.[FLEET_ANNOTATION_IMAGE] ??
            value.deployments.find(d => d.image)?.image ??
            undefined
          }
          onClose={() => setReleaseOpen(false)}
          onReleased={refresh}
        />
      )}
      {picked && (
        <DeploymentActionDialog
          action={picked.action}
          deployment={picked.deployment}
          componentName={entity.metadata.name}
          onClose={() => setPicked(undefined)}
          onDone={refresh}
        />
      )}
    </InfoCard>
  );
}
