import type {
  ClusterDetails,
  KubernetesCredential,
} from '@backstage/plugin-kubernetes-node';
import { ClusterAgents } from './clusterHttp';

const credential: KubernetesCredential = { type: 'bearer token', token: 't' };

function details(caData: string): ClusterDetails {
  return {
    name: 'sim-1',
    url: 'https://127.0.0.1:6443/clusters/sim-1',
    authMetadata: {},
    caData,
  };
}

describe('ClusterAgents', () => {
  afterEach(() => jest.useRealTimers());

  it("keeps a cluster's agent while its TLS settings stay, and retires it, not at once, when they change", () => {
    jest.useFakeTimers();
    const agents = new ClusterAgents(11_000);
    const first = agents.agentFor(details('Zmlyc3Q='), credential)!;
    expect(agents.agentFor(details('Zmlyc3Q='), credential)).toBe(first);
    const destroy = jest.spyOn(first, 'destroy');

    const second = agents.agentFor(details('c2Vjb25k'), credential)!;
    expect(second).not.toBe(first);
    // A request of the old agent may still be under way: it has until its deadline.
    jest.advanceTimersByTime(10_999);
    expect(destroy).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(destroy).toHaveBeenCalledTimes(1);
    second.destroy();
  });
});
