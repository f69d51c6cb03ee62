import type { CanaryTarget } from './canaryObjects';
import { backendRefsFor, steeredRules } from './httpRoute';

const target = { name: 'payments', namespace: 'shop' } as CanaryTarget;

/** A route as the API server stores it: the CRD's defaults filled in. */
function route(rules: object[][]) {
  return {
    metadata: { name: 'storefront' },
    spec: { rules: rules.map(backendRefs => ({ backendRefs })) },
  };
}
const ref = (name: string, over: object = {}) => ({
  group: '',
  kind: 'Service',
  name,
  port: 80,
  weight: 1,
  ...over,
});

describe('HTTPRoute rules Fleet steers', () => {
  it("chooses the rules naming the application's Service, in the forms the API server stores", () => {
    const r = route([
      [ref('cart')],
      [ref('payments')],
      [{ name: 'payments', port: 80 }],
      [ref('payments', { namespace: 'shop' })],
      // Not the application's Service: another namespace's, or not a Service at all.
      [ref('payments', { namespace: 'other' })],
      [ref('payments', { group: 'example.com', kind: 'Backend' })],
    ]);
    expect(steeredRules(r, target)).toEqual([1, 2, 3]);
  });

  it('refuses a rule that sends to another backend as well, naming it', () => {
    expect(() =>
      steeredRules(route([[ref('payments'), ref('legacy')]]), target),
    ).toThrow(
      /OWNERSHIP_CONFLICT: HTTPRoute shop\/storefront rule 0 sends to Service legacy besides the application's Service payments/,
    );
    // Its own canary beside it is not another backend.
    expect(
      steeredRules(route([[ref('payments'), ref('payments-canary')]]), target),
    ).toEqual([0]);
  });

  it('keeps the stable backend as written and gives the canary the same but for its name', () => {
    const rule = {
      backendRefs: [
        ref('payments', { filters: [{ type: 'RequestHeaderModifier' }] }),
      ],
    };
    expect(backendRefsFor(rule, target, 20)).toEqual([
      ref('payments', {
        filters: [{ type: 'RequestHeaderModifier' }],
        weight: 80,
      }),
      ref('payments-canary', {
        filters: [{ type: 'RequestHeaderModifier' }],
        weight: 20,
      }),
    ]);
    expect(backendRefsFor(rule, target, 0)).toEqual([
      ref('payments', {
        filters: [{ type: 'RequestHeaderModifier' }],
        weight: 100,
      }),
    ]);
  });

  it("gives the baseline of a judged canary the canary's share, and steers a rule naming it", () => {
    const rule = { backendRefs: [ref('payments')] };
    expect(backendRefsFor(rule, target, 40, 40)).toEqual([
      ref('payments', { weight: 20 }),
      ref('payments-canary', { weight: 40 }),
      ref('payments-baseline', { weight: 40 }),
    ]);
    // The rule as Fleet left it mid-release is still Fleet's to split.
    expect(
      steeredRules(
        route([
          [ref('payments'), ref('payments-canary'), ref('payments-baseline')],
        ]),
        target,
      ),
    ).toEqual([0]);
  });
});
