import { mockServices } from '@backstage/backend-test-utils';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Reflector } from './Reflector';

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
});
