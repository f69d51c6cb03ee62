import { renderInTestApp } from '@backstage/test-utils';
import { lightTheme } from '@backstage/theme';
import { hexToRgb } from '@material-ui/core/styles';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  ClusterStatusChip,
  DeploymentStatusChip,
  SyncStatusChip,
} from './StatusChip';
import { deploymentReasonText, reasonParts, ReasonText } from './reasonText';

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

  it('says a reason in words with its code beside them, keeps the details, and leaves text that is no code as it is', () => {
    expect(deploymentReasonText('ROLLED_BACK')).toBe(
      'Rolled back: a newer revision failed, so the last DEPLOYED one runs again (ROLLED_BACK)',
    );
    expect(deploymentReasonText('CLUSTER_OFFLINE')).toBe(
      'Cluster offline (CLUSTER_OFFLINE)',
    );
    expect(
      reasonParts('NOT_PROBEABLE: the details are shown to cluster admins'),
    ).toEqual({
      words: 'Cannot be probed',
      code: 'NOT_PROBEABLE',
      detail: 'the details are shown to cluster admins',
    });
    // A code Fleet has no words for yet still reads as words.
    expect(reasonParts('SOMETHING_NEW')).toEqual({
      words: 'Something new',
      code: 'SOMETHING_NEW',
    });
    expect(reasonParts('connect ECONNREFUSED')).toEqual({
      words: 'connect ECONNREFUSED',
    });
  });

  it('renders a reason as words, then its details, the code on hover', async () => {
    await renderInTestApp(
      <ReasonText reason="FAILURE_THRESHOLD_REACHED: 2 probes failed" />,
    );
    const words = screen.getByText('Outage confirmed');
    expect(words).toHaveAttribute('title', 'FAILURE_THRESHOLD_REACHED');
    expect(words.parentElement).toHaveTextContent(
      'Outage confirmed: 2 probes failed',
    );
    expect(
      screen.queryByText(/FAILURE_THRESHOLD_REACHED/),
    ).not.toBeInTheDocument();
  });

  it('warns of an ONLINE cluster whose probe fails (the grace period), with the reason in words on hover', async () => {
    await renderInTestApp(
      <>
        <ClusterStatusChip
          status="ONLINE"
          reason="PROBE_FAILED: 1/2 consecutive probes failed"
          consecutiveFailures={1}
        />
        <ClusterStatusChip status="ONLINE" reason="PROBE_SUCCEEDED" />
      </>,
    );
    const failing = screen.getByLabelText(
      'Cluster status: ONLINE — probe failing',
    );
    expect(failing).toHaveTextContent('ONLINE — probe failing');
    await userEvent.hover(failing);
    expect(await screen.findByRole('tooltip')).toHaveTextContent(
      'Probe failed: 1/2 consecutive probes failed',
    );
    await userEvent.unhover(failing);
    await userEvent.hover(screen.getByLabelText('Cluster status: ONLINE'));
    await waitFor(() =>
      expect(screen.getByRole('tooltip')).toHaveTextContent('Probe succeeded'),
    );
    // The warning tone, not the plain green of ONLINE.
    expect(failing.className).toMatch(/warning/);
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
