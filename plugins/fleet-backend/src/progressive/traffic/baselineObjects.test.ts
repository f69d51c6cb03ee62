import type { CanaryTarget } from './canaryObjects';
import {
  baselineDeployment,
  baselineService,
  baselineWeight,
} from './baselineObjects';
import { routeFor } from './virtualService';

const stableDeployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'payments',
    labels: { 'app.kubernetes.io/name': 'payments' },
    annotations: { 'cnp.io/entity-ref': 'component:default/payments' },
  },
  spec: {
    replicas: 4,
    selector: { matchLabels: { 'app.kubernetes.io/name': 'payments' } },
    template: {
      metadata: {
        labels: {
          'app.kubernetes.io/name': 'payments',
          'cnp.io/track': 'stable',
        },
      },
      spec: { containers: [{ name: 'app', image: 'payments:1' }] },
    },
  },
};

const target = {
  name: 'payments',
  namespace: 'apps',
  stable: {
    deployment: stableDeployment,
    service: {
      metadata: { name: 'payments', annotations: { a: 'b' } },
      spec: { selector: { 'app.kubernetes.io/name': 'payments' } },
    },
  },
} as unknown as CanaryTarget;

describe('the baseline of a canary', () => {
  it('runs the stable revision, tracked baseline and never stable, with its marks', () => {
    const d = baselineDeployment(target, 2);
    expect(d.metadata).toMatchObject({
      name: 'payments-baseline',
      labels: { 'cnp.io/track': 'baseline' },
      annotations: { 'cnp.io/entity-ref': 'component:default/payments' },
    });
    expect(d.spec!.replicas).toBe(2);
    expect(d.spec!.selector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'payments',
      'cnp.io/track': 'baseline',
    });
    expect(d.spec!.template.metadata!.labels!['cnp.io/track']).toBe('baseline');
    expect(d.spec!.template.spec!.containers[0].image).toBe('payments:1');
    // The stable Deployment's object is left as it was.
    expect(stableDeployment.spec.template.metadata.labels['cnp.io/track']).toBe(
      'stable',
    );
    expect(baselineService(target)).toMatchObject({
      metadata: { name: 'payments-baseline', annotations: { a: 'b' } },
      spec: {
        selector: {
          'app.kubernetes.io/name': 'payments',
          'cnp.io/track': 'baseline',
        },
      },
    });
  });

  it("routes the baseline the canary's share, in the stable host's form, taken from the stable", () => {
    expect([20, 50, 60, 100].map(baselineWeight)).toEqual([20, 50, 40, 0]);
    const route = {
      route: [
        { destination: { host: 'payments.apps.svc', port: { number: 80 } } },
      ],
    };
    const next = routeFor(route, target, 20, false, 20);
    expect(next).toEqual([
      {
        destination: { host: 'payments.apps.svc', port: { number: 80 } },
        weight: 60,
      },
      {
        destination: { host: 'payments-canary.apps.svc', port: { number: 80 } },
        weight: 20,
      },
      {
        destination: {
          host: 'payments-baseline.apps.svc',
          port: { number: 80 },
        },
        weight: 20,
      },
    ]);
    // Read back, the stable destination is still the user's, never the baseline's.
    expect(routeFor({ route: [...next].reverse() }, target, 0)).toEqual([
      {
        destination: { host: 'payments.apps.svc', port: { number: 80 } },
        weight: 100,
      },
    ]);
  });
});
