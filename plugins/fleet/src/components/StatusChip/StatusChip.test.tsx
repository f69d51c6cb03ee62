import { renderInTestApp } from '@backstage/test-utils';
import { lightTheme } from '@backstage/theme';
import { hexToRgb } from '@material-ui/core/styles';
import { screen } from '@testing-library/react';
import {
  ClusterStatusChip,
  DeploymentStatusChip,
  SyncStatusChip,
} from './StatusChip';
import { deploymentReasonText } from './deploymentReasonText';

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

  it('labels REMOVING in words', async () => {
    await renderInTestApp(<DeploymentStatusChip status="REMOVING" />);
    expect(
      screen.getByLabelText('Deployment status: REMOVING'),
    ).toHaveTextContent('REMOVING');
  });

  it('says in words what ROLLED_BACK means, and leaves other reasons as they are', () => {
    expect(deploymentReasonText('ROLLED_BACK')).toBe(
      'Rolled back: a newer revision failed, so the last DEPLOYED one runs again',
    );
    expect(deploymentReasonText('CLUSTER_OFFLINE')).toBe('CLUSTER_OFFLINE');
  });

  it('takes its colours from the theme, with black or white text, whichever reads better on them', async () => {
    const { status, common } = lightTheme.palette;
    await renderInTestApp(
      <>
        <ClusterStatusChip status="ONLINE" />
        <ClusterStatusChip status="OFFLINE" />
        <DeploymentStatusChip status="PROGRESSING" />
        <DeploymentStatusChip status="REMOVING" />
      </>,
    );
    /** The colours the chip's own class sets (jsdom does not cascade them into computed styles). */
    const colours = (label: string) => {
      const chip = screen.getByLabelText(label);
      const rules = Array.from(document.styleSheets).flatMap(sheet =>
        Array.from(sheet.cssRules),
      ) as CSSStyleRule[];
      const own = rules.filter(
        r =>
          r.selectorText?.startsWith('.makeStyles-') &&
          chip.classList.contains(r.selectorText.slice(1)),
      );
      expect(own).toHaveLength(1);
      return [own[0].style.backgroundColor, own[0].style.color];
    };
    expect(colours('Cluster status: ONLINE')).toEqual(
      [status.ok, common.black].map(hexToRgb),
    );
    expect(colours('Cluster status: OFFLINE')).toEqual(
      [status.error, common.white].map(hexToRgb),
    );
    expect(colours('Deployment status: PROGRESSING')).toEqual(
      [status.running, common.white].map(hexToRgb),
    );
    expect(colours('Deployment status: REMOVING')).toEqual(
      [status.aborted, common.white].map(hexToRgb),
    );
  });
});
