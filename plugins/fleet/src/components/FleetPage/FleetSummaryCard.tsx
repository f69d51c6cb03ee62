import { InfoCard, WarningPanel } from '@backstage/core-components';
import {
  CLUSTER_STATUSES,
  DEPLOYMENT_STATUSES,
  SYNC_STATUSES,
  type FleetSummary,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Grid from '@material-ui/core/Grid';
import Typography from '@material-ui/core/Typography';
import { memo, type ReactNode } from 'react';
import {
  ClusterStatusChip,
  DeploymentStatusChip,
  SyncStatusChip,
} from '../StatusChip';

/** A row of status chips, each with its count: the same for clusters and deployments. */
function Counts(props: { label: string; children: ReactNode }) {
  return (
    <Box
      display="flex"
      flexWrap="wrap"
      style={{ gap: 16 }}
      aria-label={props.label}
      role="list"
    >
      {props.children}
    </Box>
  );
}

function Count(props: { n: number; children: ReactNode }) {
  return (
    <Box display="flex" alignItems="center" style={{ gap: 6 }} role="listitem">
      {props.children}
      <Typography variant="h6" component="span">
        {props.n}
      </Typography>
    </Box>
  );
}

/**
 * The fleet page's summary, as items of its grid: the mass-outage warning while one is suspected,
 * then the clusters by status and the deployments by status and by sync status, each as the
 * status chips the rest of Fleet uses, with their counts.
 */
export const FleetSummaryCard = memo(function SummaryCards(props: {
  summary: FleetSummary;
}) {
  const { clusters, deployments, massOutage } = props.summary;
  return (
    <>
      {massOutage.active && (
        <Grid item xs={12}>
          <WarningPanel
            severity="error"
            title="Mass outage suspected: deployment cascades are held"
            defaultExpanded
          >
            {massOutage.message} Clusters: {massOutage.clusters.join(', ')}.
          </WarningPanel>
        </Grid>
      )}
      <Grid item xs={12} md={6}>
        <InfoCard title="Clusters">
          <Counts label="Cluster counts">
            {CLUSTER_STATUSES.map(s => (
              <Count key={s} n={clusters[s]}>
                <ClusterStatusChip status={s} />
              </Count>
            ))}
          </Counts>
        </InfoCard>
      </Grid>
      <Grid item xs={12} md={6}>
        <InfoCard title={`Deployments (${deployments.total})`}>
          <Counts label="Deployment counts">
            {DEPLOYMENT_STATUSES
              // REMOVING is a passing state: counted only while something is being removed.
              .filter(s => s !== 'REMOVING' || deployments.byStatus[s] > 0)
              .map(s => (
                <Count key={s} n={deployments.byStatus[s] ?? 0}>
                  <DeploymentStatusChip status={s} />
                </Count>
              ))}
          </Counts>
          <Box mt={2}>
            <Counts label="Sync counts">
              {SYNC_STATUSES.map(s => (
                <Count key={s} n={deployments.bySyncStatus[s] ?? 0}>
                  <SyncStatusChip status={s} />
                </Count>
              ))}
            </Counts>
          </Box>
        </InfoCard>
      </Grid>
    </>
  );
});
