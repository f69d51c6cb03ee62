import { KubeSimulator, type KubeSimulatorOptions } from './KubeSimulator';

/**
 * A KubeSimulator for the whole test file, as the jest hooks of its top level: started before
 * the first test, every cluster set back to healthy before each test (no fault, and the file's
 * readiness delay when it names one), stopped after the last. The answer stands for the running
 * simulator, so tests use it as they would the simulator itself.
 */
export function useSimulator(options: KubeSimulatorOptions): KubeSimulator {
  let sim: KubeSimulator | undefined;
  beforeAll(async () => {
    sim = await KubeSimulator.start(options);
  });
  afterAll(async () => {
    await sim?.stop();
    sim = undefined;
  });
  beforeEach(() => {
    for (const name of sim!.clusterNames()) {
      sim!.setFault(name, { mode: 'ok' });
      if (options.readyDelayMs !== undefined) {
        sim!.setReadiness(name, {
          neverReady: false,
          readyDelayMs: options.readyDelayMs,
        });
      }
    }
  });
  return new Proxy({} as KubeSimulator, {
    get(_target, property) {
      if (!sim) {
        throw new Error(
          'The simulator starts in beforeAll: use it inside a test or a hook',
        );
      }
      const value = Reflect.get(sim, property, sim);
      return typeof value === 'function' ? value.bind(sim) : value;
    },
  });
}
