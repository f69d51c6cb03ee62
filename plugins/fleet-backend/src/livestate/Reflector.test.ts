import { mockServices } from '@backstage/backend-test-utils';
import type { KubernetesObject } from '@kubernetes/client-node';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Reflector } from './Reflector';

/** A full, synchronous garbage collection (what `--expose-gc` gives), from inside a test. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/*
 * What the reflector keeps of an object. Its list and watch semantics against the simulator are
 * in ClusterWatches.test.ts; here, the list is an object given in place of a cluster's answer.
 */
describe('Reflector', () => {
  it('keeps objects without their managedFields, from a list and from a watch', async () => {
    const managedFields = [{ manager: 'kubectl', operation: 'Apply' }];
    let sendEvent: ((type: string, object: unknown) => void) | undefined;
    const reflector = new Reflector<KubernetesObject>({
      name: 'Deployment objects on test',
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      path: '/apis/apps/v1/deployments',
      list: async () => ({
        items: [{ metadata: { name: 'a', namespace: 'n', managedFields } }],
        metadata: { resourceVersion: '1' },
      }),
      watch: async (_path, _query, onEvent) => {
        sendEvent = onEvent;
        return { abort() {} };
      },
      onChange: () => {},
      logger: mockServices.logger.mock(),
    });
    reflector.start();
    for (let i = 0; i < 100 && !sendEvent; i++)
      await new Promise(r => setTimeout(r, 10));
    expect(reflector.getState()).toBe('synced');
    expect(reflector.get('n', 'a')).toEqual({
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'a', namespace: 'n' },
    });
    sendEvent!('ADDED', {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: {
        name: 'b',
        namespace: 'n',
        resourceVersion: '2',
        managedFields,
      },
    });
    expect(reflector.get('n', 'b')?.metadata).toEqual({
      name: 'b',
      namespace: 'n',
      resourceVersion: '2',
    });
    reflector.stop();
  });

  it('does not hold the list it answered while its watch waits to open', async () => {
    // The list as a client returns it: here one large item only this test's WeakRef points to
    // once the reflector has copied what it keeps.
    let listed: WeakRef<object> | undefined;
    let watchAsked = false;
    let openWatch: (() => void) | undefined;
    const reflector = new Reflector<KubernetesObject>({
      name: 'Deployment objects on test',
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      path: '/apis/apps/v1/deployments',
      list: async () => {
        const list = {
          items: [
            {
              metadata: { name: 'a', namespace: 'n' },
              spec: { blob: 'x'.repeat(1 << 16) },
            },
          ],
          metadata: { resourceVersion: '1' },
        };
        listed = new WeakRef(list);
        return list;
      },
      // Opening the watch waits its turn behind other clusters' lists, as in a queue that
      // holds it: answered only at the end of this test.
      watch: () => {
        watchAsked = true;
        return new Promise(resolve => {
          openWatch = () => resolve({ abort() {} });
        });
      },
      onChange: () => {},
      logger: mockServices.logger.mock(),
    });
    reflector.start();
    for (let i = 0; i < 100 && !watchAsked; i++)
      await new Promise(r => setTimeout(r, 10));
    expect(watchAsked).toBe(true);
    expect(reflector.get('n', 'a')?.metadata?.name).toBe('a');
    // Let the microtasks that handed the list over run out, then collect.
    await new Promise(r => setTimeout(r, 10));
    collectGarbage();
    expect(listed?.deref()).toBeUndefined();
    openWatch?.();
    reflector.stop();
  });
});
