import { KubeSimulator, KubeSimulatorOptions } from '@cnp/kube-simulator';
import { onCleanup } from './cleanup';

const simulatorsToStop = new Array<KubeSimulator>();

/**
 * Starts a KubeSimulator that stops by itself: after the test file under jest, the way
 * `startTestBackend` stops its backends (call it in `beforeAll` or a test, and leave out the
 * `afterAll`); at the harness's cleanup elsewhere (a benchmark, a chaos scenario).
 */
export async function startSimulator(
  options: KubeSimulatorOptions,
): Promise<KubeSimulator> {
  const sim = await KubeSimulator.start(options);
  if (typeof afterAll === 'function') simulatorsToStop.push(sim);
  else onCleanup(() => sim.stop());
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
