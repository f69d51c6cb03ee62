import { soakMs, stageIssues } from './stageRules';

describe('soakMs', () => {
  it('reads seconds, minutes, hours and days; none is 0', () => {
    expect(soakMs(undefined)).toBe(0);
    expect(soakMs('0s')).toBe(0);
    expect(soakMs('30m')).toBe(30 * 60_000);
    expect(soakMs('2h')).toBe(2 * 3_600_000);
    expect(soakMs('1d')).toBe(86_400_000);
    expect(soakMs('1w')).toBeUndefined();
  });
});

describe('stageIssues', () => {
  it('accepts stages in order, each with its own clusters', () => {
    expect(
      stageIssues([
        { name: 'staging', clusters: ['sim-1'] },
        {
          name: 'prod',
          clusterSelector: 'env=prod',
          requires: { stage: 'staging', soak: '1h' },
        },
      ]),
    ).toEqual([]);
    expect(stageIssues(undefined)).toEqual([]);
  });

  it('refuses a name given twice', () => {
    expect(
      stageIssues([
        { name: 'a', clusters: ['x'] },
        { name: 'a', clusters: ['y'] },
      ]),
    ).toEqual([
      {
        path: [1, 'name'],
        message:
          "'a' is the name of stage 0 already: stage names must be unique",
      },
    ]);
  });

  it('refuses a requirement on a later stage, an unknown one or itself', () => {
    const issues = stageIssues([
      { name: 'prod', clusters: ['x'], requires: { stage: 'staging' } },
      { name: 'staging', clusters: ['y'], requires: { stage: 'staging' } },
      { name: 'dr', clusters: ['z'], requires: { stage: 'nowhere' } },
    ]);
    expect(issues.map(i => [i.path, i.message])).toEqual([
      [
        [0, 'requires', 'stage'],
        "must name an earlier stage ('staging' is not before 'prod')",
      ],
      [[1, 'requires', 'stage'], 'a stage cannot require itself'],
      [
        [2, 'requires', 'stage'],
        "must name an earlier stage ('nowhere' is not before 'dr')",
      ],
    ]);
  });

  it('refuses a named cluster in two stages', () => {
    expect(
      stageIssues([
        { name: 'staging', clusters: ['sim-1', 'sim-2'] },
        { name: 'prod', clusters: ['sim-2'], requires: { stage: 'staging' } },
      ]),
    ).toEqual([
      {
        path: [1, 'clusters'],
        message:
          "cluster 'sim-2' is in stage 'staging' already: a cluster belongs to one stage at most",
      },
    ]);
  });

  it('needs clusters or a selector, not both', () => {
    expect(
      stageIssues([
        { name: 'a' },
        { name: 'b', clusters: ['x'], clusterSelector: { env: 'prod' } },
      ]).map(i => i.message),
    ).toEqual([
      'needs clusters or a clusterSelector',
      'give clusters or clusterSelector, not both',
    ]);
  });
});
