import type { ReleaseStrategy } from '@cnp/plugin-fleet-common';
import { judgmentFamily } from './judging';

const template = (name: string, compare?: object) => ({
  name,
  ...(compare
    ? { compare: { baseline: true, direction: 'increase', ...compare } }
    : { successCondition: 'result[0] < 1' }),
});

const strategy = (steps: unknown[], templates: unknown[]) =>
  ({
    canary: { steps },
    analysis: { templates },
  } as unknown as ReleaseStrategy);

describe('judgmentFamily', () => {
  it('counts each compared template on each step of each cluster, and the wait for completion', () => {
    const steps = [
      { setWeight: 20 },
      { pause: { duration: '5m' } },
      { setWeight: 50 },
      { pause: {} },
    ];
    const two = [template('latency', {}), template('errors', {})];
    // 4 steps and the completion: 5 sequences a template a cluster.
    expect(judgmentFamily(strategy(steps, two), 10)).toBe(10 * 2 * 5);
    // Threshold templates are measured, not judged: they share nothing.
    expect(
      judgmentFamily(
        strategy(steps, [template('latency', {}), template('cpu')]),
        3,
      ),
    ).toBe(3 * 1 * 5);
    expect(judgmentFamily(strategy([], [template('latency', {})]), 0)).toBe(1);
  });
});
