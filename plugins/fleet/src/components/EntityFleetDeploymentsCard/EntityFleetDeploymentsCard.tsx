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
  FLEET_ANNOTATION_CLUSTER_SELECTOR,
  FLEET_ANNOTATION_IMAGE,
  FLEET_ANNOTATION_MANIFESTS_REF,
  fleetDeploymentCreatePermission,
  fleetDeploymentDeletePermission,
  fleetReleaseManagePermission,
  type Cluster,
  type Deployment,
  type Release,
  fleetSignalChannels,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Typography from '@material-ui/core/Typography';
import CloudUploadIcon from '@material-ui/icons/CloudUpload';
import LayersIcon from '@material-ui/icons/Layers';
import { useState } from 'react';
import { fleetApiRef } from '../../api';
import { usePolling } from '../../hooks/usePolling';
import {
  DeploymentActionDialog,
  PermittedButton,
  type DeploymentAction,
} from '../DeploymentActions';
import { DeployDialog } from '../DeployDialog';
import { ReleaseDialog } from '../ReleaseDialog';
import { ReleasePanel } from '../ReleasePanel';
import { StageStrip } from '../StageStrip';
import { ClusterStatusChip } from '../StatusChip';
import { ClusterLink } from '../ClusterLink';
import { DeploymentRows } from './DeploymentRows';
import { VersionMatrix } from './VersionMatrix';
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
                consecutiveFailures={cluster.consecutiveFailures}
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

/**
 * What the card says when the component runs nowhere: where it was undeployed from when its
 * releases say so, that it is not deployed (never "yet": it may have been), or, before its first
 * deploy, how to start.
 */
function NotDeployedText(props: {
  applicationId?: string;
  releases: Release[];
}) {
  if (!props.applicationId)
    return (
      <Typography variant="body2">
        Not deployed to any cluster yet. Use Deploy to start.
      </Typography>
    );
  const removed = [
    ...new Set(
      props.releases.flatMap(r =>
        r.targets.filter(t => t.status === 'REMOVED').map(t => t.cluster),
      ),
    ),
  ];
  return (
    <Typography variant="body2">
      {removed.length > 0
        ? `Undeployed from ${removed.join(
            ', ',
          )}: not deployed to any cluster now.`
        : 'Not deployed to any cluster.'}{' '}
      Use Deploy to deploy it again.
    </Typography>
  );
}

/**
 * On a component's page: the state of each target cluster, one row per deployment with its
 * History, Rollback and Undeploy, and a Deploy button; the header sums up which versions run
 * where. Below, the application's stages (when it has some) and its releases, those waiting for
 * approval with Approve and Reject. Refreshes on its own.
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
  const manifestsRef =
    entity.metadata.annotations?.[FLEET_ANNOTATION_MANIFESTS_REF];
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
            <NotDeployedText
              applicationId={value.applicationId}
              releases={value.releases}
            />
          ) : (
            <>
              <DeploymentRows
                deployments={value.deployments}
                clusters={value.clusters}
                releases={value.releases}
                componentName={entity.metadata.name}
                permissions={{ rollback: canDeploy, undeploy: canUndeploy }}
                onAction={(action, deployment) =>
                  setPicked({ action, deployment })
                }
              />
              <VersionMatrix
                deployments={value.deployments}
                releases={value.releases}
              />
            </>
          )}
        </Box>
        {value.applicationId && (
          <StageStrip
            stages={value.stages}
            deployedClusters={value.deployments.map(d => d.cluster)}
            error={value.stagesError}
          />
        )}
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
            disabledReason={
              value
                ? `${entity.metadata.name} has no Fleet application yet: deploy it to a cluster first, then release it`
                : "Reading the component's deployments…"
            }
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
            disabledReason="Reading the component's deployments…"
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
          clusterSelector={
            entity.metadata.annotations?.[FLEET_ANNOTATION_CLUSTER_SELECTOR]
          }
          // A component with its own manifests deploys their images unless one is typed.
          defaultImage={
            manifestsRef === undefined
              ? entity.metadata.annotations?.[FLEET_ANNOTATION_IMAGE]
              : undefined
          }
          manifestsRef={manifestsRef}
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
          // A component with its own manifests releases their images unless one is typed.
          defaultImage={
            manifestsRef === undefined
              ? entity.metadata.annotations?.[FLEET_ANNOTATION_IMAGE] ??
                value.deployments.find(d => d.image)?.image ??
                undefined
              : undefined
          }
          manifestsRef={manifestsRef}
          stages={value.stages}
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
