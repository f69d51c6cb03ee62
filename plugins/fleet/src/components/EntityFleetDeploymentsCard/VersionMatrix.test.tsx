import { renderInTestApp } from '@backstage/test-utils';
import { screen, within } from '@testing-library/react';
import {
  deployment,
  progressiveRelease,
  release,
} from '../../testUtils/fixtures';
import { VersionMatrix, versionOf } from './VersionMatrix';

const deployments = [
  deployment('sim-1', 'DEPLOYED'),
  deployment('sim-2', 'DEGRADED'),
  deployment('sim-3', 'DEPLOYED', { image: 'ghcr.io/acme/payments:1.10.0' }),
];

/** The matrix as text, a row per cluster: its cells, empty ones as "-". */
function matrix() {
  const table = screen.getByRole('table', { name: 'Version matrix' });
  return within(table)
    .getAllByRole('row')
    .map(row =>
      Array.from(row.querySelectorAll('th, td'))
        .map(cell => cell.textContent || '-')
        .join(' | '),
    );
}

describe('VersionMatrix', () => {
  it('names the version of an image: its tag, a digest, or latest', () => {
    expect(versionOf('ghcr.io/acme/payments:1.4.2')).toBe('1.4.2');
    expect(versionOf('registry:5000/payments')).toBe('latest');
    expect(versionOf('payments@sha256:0123456789abcdef0123')).toBe(
      'sha256:0123456789ab',
    );
  });

  it('shows which version each cluster runs, versions in numeric order', async () => {
    await renderInTestApp(
      <VersionMatrix deployments={deployments} releases={[]} />,
    );
    expect(matrix()).toEqual([
      'Cluster | 1.4.2 | 1.10.0',
      'sim-1 | Deployed | -',
      'sim-2 | Degraded | -',
      'sim-3 | - | Deployed',
    ]);
    // The whole image on hover.
    expect(screen.getByRole('columnheader', { name: '1.4.2' })).toHaveAttribute(
      'title',
      'ghcr.io/acme/payments:1.4.2',
    );
  });

  it('highlights the version a release brings, with what it does on each of its clusters', async () => {
    await renderInTestApp(
      <VersionMatrix
        deployments={deployments}
        releases={[
          progressiveRelease({ targets: release(['sim-1', 'sim-2']).targets }),
        ]}
      />,
    );
    expect(matrix()).toEqual([
      'Cluster | 1.4.2 | 1.5.0 (releasing) | 1.10.0',
      'sim-1 | Deployed | canary running, 20 % | -',
      'sim-2 | Degraded | waiting | -',
      'sim-3 | - | - | Deployed',
    ]);
    expect(
      screen.getByRole('columnheader', { name: '1.5.0 (releasing)' }),
    ).toHaveAttribute('data-releasing', 'true');
  });

  it('shows nothing for a finished release', async () => {
    await renderInTestApp(
      <VersionMatrix
        deployments={deployments}
        releases={[{ ...release(['sim-1']), status: 'COMPLETED' }]}
      />,
    );
    expect(matrix()[0]).toBe('Cluster | 1.4.2 | 1.10.0');
  });
});
