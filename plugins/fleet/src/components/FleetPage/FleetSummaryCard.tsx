import { InfoCard, WarningPanel } from '@backstage/core-components';
import { CLUSTER_STATUSES, type FleetSummary } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Grid from '@material-ui/core/Grid';
import Typography from '@material-ui/core/Typography';
import { ClusterStatusChip } from '../StatusChip';

/**
 * The fleet page's summary, as items of its grid: the mass-outage warning while one is suspected,
 * then the clusters by status and the deployments by status and by sync status.
 */
export function FleetSummaryCard(props: { summary: FleetSummary }) {
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
          <Box display="flex" style={{ gap: 16 }} aria-label="Cluster counts">
            {CLUSTER_STATUSES.map(s => (
              <Box
                key={s}
                display="flex"
                alignItems="center"
                style={{ gap: 6 }}
              >
                <ClusterStatusChip status={s} />
                <Typography variant="h6" component="span">
                  {clusters[s]}
                </Typography>
              </Box>
            ))}
          </Box>
        </InfoCard>
      </Grid>
      <Grid item xs={12} md={6}>
        <InfoCard title="Deployments">
          <Typography variant="body2" aria-label="Deployment counts">
            {deployments.total} in all ·{' '}
            {Object.entries(deployments.byStatus)
              // REMOVING is a passing state: counted only while something is being removed.
              .filter(([s, n]) => s !== 'REMOVING' || n > 0)
              .map(([s, n]) => `${s} ${n}`)
              .join(' · ')}
            <br />
            {Object.entries(deployments.bySyncStatus)
              .map(([s, n]) => `${s.replace(/_/g, ' ')} ${n}`)
              .join(' · ')}
          </Typography>
        </InfoCard>
      </Grid>
    </>
  );
}
