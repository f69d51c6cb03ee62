import { KubeSimulator, KubeSimulatorOptions } from '@cnp/kube-simulator';

const simulatorsToStop = new Array<KubeSimulator>();

/**
 * Starts a KubeSimulator that stops by itself after the test file, the way `startTestBackend`
 * stops its backends: call it in `beforeAll` (or a test) and leave out the `afterAll`.
 */
export async function startSimulator(
  options: KubeSimulatorOptions,
): Promise<KubeSimulator> {
  const sim = await KubeSimulator.start(options);
  simulatorsToStop.push(sim);
  return sim;
}

// Registered when a test file first imports this module, as backend-test-utils does: hooks
// cannot be added from inside a `beforeAll`.
if (typeof afterAll === 'function') {
  afterAll(async () => {
    const sims = simulatorsToStop.splice(0);
    await Promise.all(sims.map(sim => sim.stop()));
  });
}
