import { renderInTestApp } from '@backstage/test-utils';
import { screen } from '@testing-library/react';
import {
  ClusterStatusChip,
  DeploymentStatusChip,
  SyncStatusChip,
} from './StatusChip';

describe('status chips', () => {
  it.each(['ONLINE', 'OFFLINE', 'UNKNOWN'] as const)(
    'shows the %s cluster state as text, not colour alone',
    async status => {
      await renderInTestApp(<ClusterStatusChip status={status} />);
      expect(screen.getByText(status)).toBeInTheDocument();
      expect(
        screen.getByLabelText(`Cluster status: ${status}`),
      ).toBeInTheDocument();
    },
  );

  it('labels deployment and sync states', async () => {
    await renderInTestApp(
      <>
        <DeploymentStatusChip status="DEGRADED" />
        <SyncStatusChip status="OUT_OF_SYNC" />
      </>,
    );
    expect(
      screen.getByLabelText('Deployment status: DEGRADED'),
    ).toHaveTextContent('DEGRADED');
    expect(
      screen.getByLabelText('Sync status: OUT OF SYNC'),
    ).toBeInTheDocument();
  });
});
