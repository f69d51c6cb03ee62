import { deployment } from '../../testUtils/fixtures';
import { imageVersion } from '@cnp/plugin-fleet-common';
import { fleetView } from './fleetView';

describe('fleetView', () => {
  it.each([
    ['ghcr.io/acme/payments:1.4.2', '1.4.2'],
    ['localhost:5000/payments', 'localhost:5000/payments'],
    ['localhost:5000/payments:2.0', '2.0'],
    ['ghcr.io/acme/payments@sha256:abc', 'ghcr.io/acme/payments@sha256:abc'],
    ['ghcr.io/acme/payments:1.4.2@sha256:abc', '1.4.2'],
    ['nginx', 'nginx'],
  ])('reads the version of %s as %s', (image, version) => {
    expect(imageVersion(image)).toBe(version);
  });

  it('names one cluster in the singular, and counts deployments being removed apart', () => {
    expect(
      fleetView([
        deployment('sim-1', 'DEPLOYED', { image: 'nginx' }),
        deployment('sim-2', 'REMOVING', { syncStatus: 'UNKNOWN' }),
      ]),
    ).toBe('nginx on 1 cluster; 1 of 1 SYNCED; 1 being removed');
    expect(fleetView([])).toBeUndefined();
  });
});
