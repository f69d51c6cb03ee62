import type {
  ClusterDetails,
  KubernetesCredential,
} from '@backstage/plugin-kubernetes-node';
import { ClusterAgents } from './clusterHttp';

const credential: KubernetesCredential = { type: 'bearer token', token: 't' };

function details(caData: string, name = 'sim-1'): ClusterDetails {
  return {
    name,
    url: `https://127.0.0.1:6443/clusters/${name}`,
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

  it('retires the agent of a cluster no request asked for during the idle period, and only that one', () => {
    jest.useFakeTimers();
    const agents = new ClusterAgents(11_000, 600_000);
    const removed = agents.agentFor(details('Y2E=', 'sim-1'), credential)!;
    const kept = agents.agentFor(details('Y2E=', 'sim-2'), credential)!;
    const destroyRemoved = jest.spyOn(removed, 'destroy');
    const destroyKept = jest.spyOn(kept, 'destroy');

    // sim-2 is asked every minute; sim-1 (say, removed from the fleet) never again.
    for (let minute = 1; minute <= 10; minute++) {
      jest.advanceTimersByTime(60_000);
      expect(agents.agentFor(details('Y2E=', 'sim-2'), credential)).toBe(kept);
      expect(destroyRemoved).not.toHaveBeenCalled();
    }
    // Retired at the tenth minute, not destroyed under a request that may still be under way.
    jest.advanceTimersByTime(10_999);
    expect(destroyRemoved).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(destroyRemoved).toHaveBeenCalledTimes(1);
    expect(destroyKept).not.toHaveBeenCalled();
    // Asked again, the cluster gets a new agent.
    const again = agents.agentFor(details('Y2E=', 'sim-1'), credential)!;
    expect(again).not.toBe(removed);
    again.destroy();
    kept.destroy();
  });
});
