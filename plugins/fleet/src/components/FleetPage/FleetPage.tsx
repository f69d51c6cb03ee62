import {
  Content,
  ContentHeader,
  Header,
  Page,
} from '@backstage/core-components';
import { useApi } from '@backstage/core-plugin-api';
import Box from '@material-ui/core/Box';
import Grid from '@material-ui/core/Grid';
import Alert from '@material-ui/lab/Alert';
import { useState } from 'react';
import { usePermission } from '@backstage/plugin-permission-react';
import {
  fleetHealthRunPermission,
  fleetSignalChannels,
} from '@cnp/plugin-fleet-common';
import { fleetApiRef } from '../../api';
import { usePolling } from '../../hooks/usePolling';
import {
  FleetClustersCard,
  type ClusterStatusFilter,
} from './FleetClustersCard';
import { FleetApplicationsCard } from './FleetApplicationsCard';
import { FleetEventsCard } from './FleetEventsCard';
import { FleetMap } from './FleetMap';
import { FleetFreezeWindowsCard } from './FleetFreezeWindowsCard';
import { FleetReleasesUnderWayCard } from './FleetReleasesUnderWayCard';
import { FleetWaitingReleasesCard } from './FleetWaitingReleasesCard';
import { FleetSummaryCard } from './FleetSummaryCard';
import { PermittedButton } from '../DeploymentActions';
import { useHealthCycleRun } from './useHealthCycleRun';

/**
 * The fleet at a glance: counts, the mass-outage warning, every cluster (paginated, with a status
 * filter and a name or `key=value` label filter), the applications with their version on each
 * cluster, the releases waiting for an approval or a freeze window, the freeze windows, and the
 * latest status changes. Refreshes on its own, staying on the page shown.
 *
 * @public
 */
export function FleetPage(props: { pollIntervalMs?: number }) {
  const api = useApi(fleetApiRef);
  const [filter, setFilter] = useState<ClusterStatusFilter>('ALL');
  const { value, error, loading, refresh } = usePolling(
    async () => {
      const [summary, clusters, events, counts, all] = await Promise.all([
        api.getSummary(),
        api.listClusters(filter === 'ALL' ? undefined : { status: filter }),
        api.listRecentEvents({ limit: 20 }),
        api.listDeploymentCounts(),
        // The map shows every cluster, whatever the table's filter.
        filter === 'ALL' ? undefined : api.listClusters(),
      ]);
      return { summary, clusters, events, counts, all: all ?? clusters };
    },
    [api, filter],
    {
      intervalMs: props.pollIntervalMs,
      // Counts, statuses and the latest events follow every cluster and deployment change.
      signals: {
        channels: [
          fleetSignalChannels.clusters,
          fleetSignalChannels.deployments,
        ],
      },
    },
  );
  const healthCycle = useHealthCycleRun(refresh);
  // Running a cycle is the cluster admins' (fleet.health.run): others see it disabled, and why.
  const canRunHealth = usePermission({ permission: fleetHealthRunPermission });

  return (
    <Page themeId="tool">
      <Header
        title="Fleet"
        subtitle="Clusters, their health and what runs on them"
      />
      <Content>
        <ContentHeader title="Clusters">
          <PermittedButton
            variant="outlined"
            color="primary"
            onClick={healthCycle.run}
            disabled={healthCycle.running}
            permission={canRunHealth}
            deniedText="Only cluster admins may run a health check (fleet.health.run)"
          >
            {healthCycle.running ? 'Running health check…' : 'Run health check'}
          </PermittedButton>
        </ContentHeader>
        {healthCycle.message && (
          <Box mb={2}>
            <Alert severity={healthCycle.message.severity}>
              {healthCycle.message.text}
            </Alert>
          </Box>
        )}
        <Grid container spacing={3}>
          {value && <FleetSummaryCard summary={value.summary} />}
          <FleetMap clusters={value?.all} counts={value?.counts} />
          {/* Mounted with or without an answer, so its filters stay up while a filtered fetch loads or fails. */}
          <FleetClustersCard
            clusters={value?.clusters}
            fleetSize={value?.summary.clusters.total ?? 0}
            status={filter}
            onStatusChange={setFilter}
            error={error}
            loading={loading}
          />
          <FleetApplicationsCard pollIntervalMs={props.pollIntervalMs} />
          <FleetReleasesUnderWayCard pollIntervalMs={props.pollIntervalMs} />
          <FleetWaitingReleasesCard pollIntervalMs={props.pollIntervalMs} />
          <FleetFreezeWindowsCard pollIntervalMs={props.pollIntervalMs} />
          {value && <FleetEventsCard events={value.events} />}
        </Grid>
      </Content>
    </Page>
  );
}
