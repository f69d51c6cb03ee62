import {
  isEmptySelector,
  matchesSelector,
  parseLabelSelector,
} from './labelSelector';

describe('parseLabelSelector', () => {
  it('reads equalities as a label map, as before', () => {
    expect(parseLabelSelector('env=prod, tier==web')).toEqual({
      env: 'prod',
      tier: 'web',
    });
  });

  it('reads the set-based forms kubectl -l takes', () => {
    expect(
      parseLabelSelector(
        'env in (prod, staging),tier notin (db),canary,!legacy,zone!=eu-1,team=a',
      ),
    ).toEqual({
      matchLabels: { team: 'a' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'staging'] },
        { key: 'tier', operator: 'NotIn', values: ['db'] },
        { key: 'canary', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'zone', operator: 'NotIn', values: ['eu-1'] },
      ],
    });
  });

  it.each([
    'env in prod',
    'env in ()',
    'env in (a,,b)',
    'env = prod = x',
    'env in (a',
    '(a)',
    'env=prod,',
    'env in (a b)',
  ])('refuses %j rather than select everything', text => {
    expect(parseLabelSelector(text)).toBeUndefined();
  });
});

describe('matchesSelector', () => {
  const labels = { env: 'prod', tier: 'web', canary: '' };

  it('matches a label map by every pair, and never on an empty selector', () => {
    expect(matchesSelector(labels, { env: 'prod' })).toBe(true);
    expect(matchesSelector(labels, { env: 'prod', tier: 'db' })).toBe(false);
    expect(matchesSelector(labels, {})).toBe(false);
    expect(matchesSelector(labels, { matchExpressions: [] })).toBe(false);
    expect(isEmptySelector(undefined)).toBe(true);
  });

  it.each([
    ['env in (prod,staging)', true],
    ['env in (staging)', false],
    ['env notin (dev)', true],
    ['region notin (eu)', true], // absent: NotIn holds, as in Kubernetes
    ['env!=prod', false],
    ['region!=eu', true],
    ['canary', true],
    ['!canary', false],
    ['!legacy', true],
    ['legacy', false],
    ['env=prod,!canary', false],
    ['env=prod,tier in (web)', true],
  ])('%s on env=prod,tier=web,canary: %s', (text, expected) => {
    expect(matchesSelector(labels, parseLabelSelector(text)!)).toBe(expected);
  });
});
