import {
  InfoCard,
  Progress,
  ResponseErrorPanel,
} from '@backstage/core-components';
import { useApi } from '@backstage/core-plugin-api';
import { useEntity } from '@backstage/plugin-catalog-react';
import {
  FLEET_CLUSTER_RESOURCE_TYPE,
  fleetSignalChannels,
} from '@cnp/plugin-fleet-common';
import type { Entity } from '@backstage/catalog-model';
import Box from '@material-ui/core/Box';
import Chip from '@material-ui/core/Chip';
import Grid from '@material-ui/core/Grid';
import Typography from '@material-ui/core/Typography';
import { fleetApiRef } from '../../api';
import { usePolling } from '../../hooks/usePolling';
import { EventList } from '../EventList';
import { RelativeTime } from '../RelativeTime';
import {
  ClusterStatusChip,
  DeploymentStatusChip,
  ReasonText,
} from '../StatusChip';
import { EntityName } from '../EntityName';

/** Annotation the catalog provider may set when the entity name differs from the cluster name. */
export const FLEET_CLUSTER_NAME_ANNOTATION = 'cnp.io/cluster-name';

/**
 * True for the catalog `Resource` entities of type `kubernetes-cluster` that stand for clusters.
 *
 * @public
 */
export function isFleetClusterEntity(entity: Entity): boolean {
  return (
    entity.kind.toLocaleLowerCase('en-US') === 'resource' &&
    (entity.spec as { type?: string } | undefined)?.type ===
      FLEET_CLUSTER_RESOURCE_TYPE
  );
}

function Field(props: { label: string; children: React.ReactNode }) {
  return (
    <Grid item xs={12} sm={6}>
      <Typography variant="caption" color="textSecondary" component="div">
        {props.label}
      </Typography>
      <Typography variant="body2" component="div">
        {props.children}
      </Typography>
    </Grid>
  );
}

/**
 * On a cluster's page: its status, endpoint, last probe, consecutive failures, labels, the
 * applications on it and its recent events. Refreshes on its own.
 *
 * @public
 */
export function EntityFleetClusterCard(props: { pollIntervalMs?: number }) {
  const { entity } = useEntity();
  const api = useApi(fleetApiRef);
  const name =
    entity.metadata.annotations?.[FLEET_CLUSTER_NAME_ANNOTATION] ??
    entity.metadata.name;
  const { value, error, loading } = usePolling(
    async () => {
      const [cluster, deployments, events] = await Promise.all([
        api.getCluster(name),
        api.listDeployments({ cluster: name }),
        api.listClusterEvents(name),
      ]);
      return { cluster, deployments, events };
    },
    [api, name],
    {
      intervalMs: props.pollIntervalMs,
      // This cluster's changes, and those of the deployments on it.
      signals: {
        channels: [
          fleetSignalChannels.clusters,
          fleetSignalChannels.deployments,
        ],
        accepts: message =>
          message.changes.some(c =>
            message.kind === 'cluster'
              ? c.subject === name
              : c.cluster === name,
          ),
      },
    },
  );

  if (loading && !value)
    return (
      <InfoCard title="Fleet cluster">
        <Progress />
      </InfoCard>
    );
  if (error && !value) {
    return (
      <InfoCard title="Fleet cluster">
        {isNotFound(error) ? (
          <Typography variant="body2">
            {name} is not managed by Fleet: Fleet has no cluster of that name.
            Clusters come from the kubeconfigs Fleet discovers, or are
            registered by a cluster admin.
          </Typography>
        ) : (
          <ResponseErrorPanel error={error} />
        )}
      </InfoCard>
    );
  }
  const { cluster, deployments, events } = value!;
  return (
    <InfoCard title={`Fleet cluster ${cluster.name}`}>
      <Grid container spacing={2}>
        <Field label="Status">
          <Box display="flex" alignItems="center" style={{ gap: 8 }}>
            <ClusterStatusChip
              status={cluster.status}
              reason={cluster.statusReason}
              consecutiveFailures={cluster.consecutiveFailures}
            />
            {cluster.statusReason && (
              <ReasonText reason={cluster.statusReason} variant="body2" />
            )}
          </Box>
        </Field>
        <Field label="Endpoint">
          <code>{cluster.endpoint}</code>
        </Field>
        <Field label="Last probe">
          <RelativeTime value={cluster.lastProbeAt} />
          {cluster.probeLatencyMs !== null
            ? ` (${cluster.probeLatencyMs} ms)`
            : ''}
        </Field>
        <Field label="Consecutive failures">
          {cluster.consecutiveFailures}
        </Field>
        <Field label="Server version">
          {cluster.serverVersion ?? 'unknown'}
        </Field>
        <Field label="Labels">
          {Object.keys(cluster.labels).length === 0
            ? 'none'
            : Object.entries(cluster.labels).map(([k, v]) => (
                <Chip
                  key={k}
                  size="small"
                  label={`${k}=${v}`}
                  style={{ marginRight: 4 }}
                />
              ))}
        </Field>
        <Grid item xs={12}>
          <Typography variant="subtitle2">
            Applications on this cluster
          </Typography>
          {deployments.length === 0 ? (
            <Typography variant="body2">None yet.</Typography>
          ) : (
            <Box
              component="ul"
              pl={2}
              m={0}
              aria-label="Applications on this cluster"
            >
              {deployments.map(d => (
                <li key={d.id}>
                  <EntityName entityRef={d.entityRef} />{' '}
                  <DeploymentStatusChip status={d.status} reason={d.message} />{' '}
                  {d.statusReason && (
                    <ReasonText reason={d.statusReason} display="inline" />
                  )}
                </li>
              ))}
            </Box>
          )}
        </Grid>
        <Grid item xs={12}>
          <Typography variant="subtitle2">Recent events</Typography>
          <EventList events={events.slice(0, 10)} />
        </Grid>
      </Grid>
    </InfoCard>
  );
}

/** A 404 from the Fleet API: the cluster is not one of Fleet's. */
function isNotFound(error: Error): boolean {
  return (
    (error as { statusCode?: number }).statusCode === 404 ||
    (error as { response?: { status?: number } }).response?.status === 404
  );
}
