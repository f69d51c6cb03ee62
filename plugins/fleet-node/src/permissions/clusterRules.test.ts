import { fleetClusterPermissionRules } from './clusterRules';

const cluster = (labels: Record<string, string>) => ({ name: 'east', labels });
const { allowsGroup, hasLabel } = fleetClusterPermissionRules;

describe('fleet.cluster.deploy rules', () => {
  it('ALLOWS_GROUP: open without the labels, else only the groups they name (case-insensitive)', () => {
    const claims = ['user:default/ann', 'group:default/Team-A'];
    expect(allowsGroup.apply(cluster({}), { claims })).toBe(true);
    expect(
      allowsGroup.apply(cluster({ 'cnp.io/allowed-groups': 'team-a' }), {
        claims,
      }),
    ).toBe(true);
    // Dots belong to a group's name: this is one group, not team-a and payments.
    expect(
      allowsGroup.apply(
        cluster({ 'cnp.io/allowed-groups': 'team-a.payments' }),
        { claims },
      ),
    ).toBe(false);
    // More groups: one allowed-groups.cnp.io/<name> label each.
    expect(
      allowsGroup.apply(
        cluster({
          'allowed-groups.cnp.io/payments': 'true',
          'allowed-groups.cnp.io/team-a': 'true',
        }),
        { claims },
      ),
    ).toBe(true);
    expect(
      allowsGroup.apply(cluster({ 'cnp.io/allowed-groups': 'payments' }), {
        claims,
      }),
    ).toBe(false);
    // An empty label allows nobody (but admins, whom the policy allows outright).
    expect(
      allowsGroup.apply(cluster({ 'cnp.io/allowed-groups': '' }), { claims }),
    ).toBe(false);
  });

  it('HAS_LABEL: the key, or the key with its value', () => {
    expect(hasLabel.apply(cluster({ env: 'prod' }), { label: 'env' })).toBe(
      true,
    );
    expect(
      hasLabel.apply(cluster({ env: 'prod' }), { label: 'env', value: 'dev' }),
    ).toBe(false);
  });
});
