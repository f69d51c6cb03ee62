import { ConfigReader } from '@backstage/config';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeconfigAccessPolicy } from './KubeconfigAccessPolicy';

describe('KubeconfigAccessPolicy.locationsFromConfig', () => {
  const fleetConfig = new ConfigReader({
    discovery: {
      kubeconfigPath: ' /etc/fleet/kubeconfig ',
      kubeconfigDir: '/etc/fleet/kubeconfigs',
      allowedKubeconfigDirs: ['/srv/kubeconfigs'],
    },
  });

  it('reads the discovery section, trimmed', () => {
    expect(KubeconfigAccessPolicy.locationsFromConfig(fleetConfig, {})).toEqual(
      {
        kubeconfigPath: '/etc/fleet/kubeconfig',
        kubeconfigDir: '/etc/fleet/kubeconfigs',
        allowedKubeconfigDirs: ['/srv/kubeconfigs'],
      },
    );
  });

  it('lets KUBECONFIG_PATH and KUBECONFIG_DIR win, and ignores them when blank', () => {
    expect(
      KubeconfigAccessPolicy.locationsFromConfig(fleetConfig, {
        KUBECONFIG_PATH: '/tmp/kc',
        KUBECONFIG_DIR: '  ',
      }),
    ).toEqual({
      kubeconfigPath: '/tmp/kc',
      kubeconfigDir: '/etc/fleet/kubeconfigs',
      allowedKubeconfigDirs: ['/srv/kubeconfigs'],
    });
  });

  it('names nothing without a discovery section', () => {
    expect(
      KubeconfigAccessPolicy.locationsFromConfig(new ConfigReader({}), {}),
    ).toEqual({
      kubeconfigPath: undefined,
      kubeconfigDir: undefined,
      allowedKubeconfigDirs: [],
    });
  });
});

describe('KubeconfigAccessPolicy.fromConfig', () => {
  it('opens files under the fleet section’s kubeconfig directory only', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fleet-kc-'));
    const outsideDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fleet-kc-'));
    try {
      const inside = path.join(dir, 'a.yaml');
      const outside = path.join(outsideDir, 'b.yaml');
      await fs.writeFile(inside, 'apiVersion: v1');
      await fs.writeFile(outside, 'apiVersion: v1');
      const policy = KubeconfigAccessPolicy.fromConfig(
        new ConfigReader({ fleet: { discovery: { kubeconfigDir: dir } } }),
        {},
      );
      expect((await policy.resolve(inside)).kind).toBe('file');
      expect(await policy.resolve(outside)).toEqual({
        kind: 'unusable',
        reason: `kubeconfigRef '${outside}' is outside the allowed kubeconfig directories`,
      });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
      await fs.rm(outsideDir, { recursive: true, force: true });
    }
  });
});
