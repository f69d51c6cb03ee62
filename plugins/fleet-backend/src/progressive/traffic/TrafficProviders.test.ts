import type { FleetTrafficProvider } from '@cnp/plugin-fleet-node';
import type { ReleaseStrategy } from '@cnp/plugin-fleet-common';
import { builtInTrafficProviders, TrafficProviders } from './TrafficProviders';

const strategy: ReleaseStrategy = {
  waves: [{ percent: 100 }],
  canary: { steps: [{ setWeight: 50 }] },
};
const clients = {
  kubeConfigFor: async () => ({
    kind: 'unusable' as const,
    reason: 'no kubeconfig in this test',
  }),
};

function provider(
  id: string,
  detects: (cluster: string) => boolean,
): FleetTrafficProvider {
  const reached = async () => ({ kind: 'reached' as const, message: id });
  return {
    id,
    description: id,
    detect: async ({ cluster }) => detects(cluster.name),
    ownershipConflict: async () => undefined,
    step: reached,
    trafficToStable: reached,
    removeCanary: reached,
  };
}

describe('TrafficProviders', () => {
  const cluster = (name: string) => ({
    name,
    endpoint: 'https://example',
    kubeconfigRef: 'x',
    source: 'manual' as const,
  });

  it('asks the added providers first, in order, and falls back on the last one', async () => {
    const traffic = TrafficProviders.create({
      clients,
      providers: [
        provider('first', name => name === 'a'),
        provider('second', name => name === 'a' || name === 'b'),
        provider('fallback', () => false),
      ],
    });
    const detect = async (name: string) =>
      (await traffic.detect(traffic.cluster(cluster(name)), strategy)).id;
    expect(await detect('a')).toBe('first');
    expect(await detect('b')).toBe('second');
    expect(await detect('c')).toBe('fallback');
  });

  it('finds a provider by the mode stored, the fallback for none or one no longer added', () => {
    const traffic = TrafficProviders.create({
      clients,
      providers: builtInTrafficProviders(),
    });
    expect(traffic.byId('istio').id).toBe('istio');
    expect(traffic.byId('rollout').id).toBe('rollout');
    expect(traffic.byId(null).id).toBe('replicas');
    expect(traffic.byId('gone').id).toBe('replicas');
  });

  it("keeps Fleet's own ids and order for its built-in providers", () => {
    expect(builtInTrafficProviders().map(p => p.id)).toEqual([
      'gateway-api',
      'rollout',
      'istio',
      'replicas',
    ]);
  });

  it('refuses an id taken twice or one that is not lower case letters, digits and dashes', () => {
    expect(() =>
      TrafficProviders.create({
        clients,
        providers: [
          provider('replicas', () => true),
          ...builtInTrafficProviders(),
        ],
      }),
    ).toThrow("Traffic provider 'replicas' is added twice");
    expect(() =>
      TrafficProviders.create({
        clients,
        providers: [provider('My Provider', () => true)],
      }),
    ).toThrow('is not lower case letters, digits and dashes');
  });

  it("connects through Fleet's clients, and says why a cluster cannot be reached", async () => {
    const traffic = TrafficProviders.create({
      clients,
      providers: builtInTrafficProviders(),
    });
    await expect(traffic.cluster(cluster('a')).connect()).rejects.toThrow(
      "cluster 'a' has no usable kubeconfig: no kubeconfig in this test",
    );
  });
});
