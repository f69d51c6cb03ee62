import type { ReleaseStrategy } from '@cnp/plugin-fleet-common';
import { judgedSteps } from './judging';

const withSteps = (steps: unknown[]) =>
  ({ canary: { steps } } as unknown as ReleaseStrategy);

describe('judgedSteps', () => {
  it('counts the pauses the canary has traffic in, at least one', () => {
    expect(
      judgedSteps(
        withSteps([
          { pause: { duration: '1m' } },
          { setWeight: 20 },
          { pause: { duration: '5m' } },
          { setWeight: 50 },
          { pause: {} },
          { setWeight: 100 },
        ]),
      ),
    ).toBe(2);
    expect(judgedSteps(withSteps([{ setWeight: 100 }]))).toBe(1);
    expect(
      judgedSteps(
        withSteps([
          { setWeight: 10 },
          { setWeight: 0 },
          { pause: { duration: '1m' } },
        ]),
      ),
    ).toBe(1);
  });
});
