import { clusterAllowedGroups } from './permissions';

describe('the groups a cluster admits', () => {
  it('reads a group name with dots as one group: payments.platform admits neither payments nor platform', () => {
    expect(
      clusterAllowedGroups({ 'cnp.io/allowed-groups': 'payments.platform' }),
    ).toEqual(['group:default/payments.platform']);
    expect(
      clusterAllowedGroups({
        'allowed-groups.cnp.io/payments.platform': 'true',
      }),
    ).toEqual(['group:default/payments.platform']);
  });

  it('admits one group per allowed-groups.cnp.io/<name> label, beside the single-group cnp.io/allowed-groups label', () => {
    expect(
      clusterAllowedGroups({
        env: 'prod',
        'cnp.io/allowed-groups': 'Team-A',
        'allowed-groups.cnp.io/payments': 'true',
        'allowed-groups.cnp.io/web_v2.ops': '',
        'allowed-groups.cnp.io/team-a': 'true',
      }),
    ).toEqual([
      'group:default/team-a',
      'group:default/payments',
      'group:default/web_v2.ops',
    ]);
  });

  it('keeps old single-group labels working, an empty one admitting nobody', () => {
    expect(clusterAllowedGroups({ 'cnp.io/allowed-groups': 'team-a' })).toEqual(
      ['group:default/team-a'],
    );
    expect(clusterAllowedGroups({ 'cnp.io/allowed-groups': ' ' })).toEqual([]);
  });

  it('is open without any of these labels, and closed (admitting nobody) by a per-group label not set to true', () => {
    expect(clusterAllowedGroups(undefined)).toBeUndefined();
    expect(clusterAllowedGroups({ env: 'prod' })).toBeUndefined();
    expect(
      clusterAllowedGroups({ 'allowed-groups.cnp.io/payments': 'false' }),
    ).toEqual([]);
  });
});
