/**
 * A strategy to start from, for the clusters a release goes to: the first cluster alone, then
 * half of them, then all; on each, 20 % of the traffic until promoted, 60 % for 30 seconds, then
 * 100 %, and a rollback when it fails. With `prometheusAddress` (a server the backend allows
 * analyses to query), an HTTP success rate is checked all along; without one the example has no
 * analysis, as the backend would refuse any.
 */
export function exampleStrategy(
  clusters: string[],
  prometheusAddress?: string,
): string {
  const [first, ...rest] = clusters.length > 0 ? clusters : ['<cluster>'];
  const waves = [`  - clusters: [${first}]`];
  if (rest.length > 2) waves.push('  - percent: 50');
  if (rest.length > 0) waves.push('  - percent: 100');
  const analysis = prometheusAddress
    ? [
        'analysis:',
        '  templates:',
        '    - name: http-success-rate',
        '      interval: 10s',
        '      failureLimit: 1',
        '      successCondition: result[0] >= 0.995',
        '      provider:',
        '        prometheus:',
        `          address: ${prometheusAddress}`,
        '          query: sum(rate(http_requests_total{app="{{app}}",cluster="{{cluster}}",code!~"5.."}[2m])) / sum(rate(http_requests_total{app="{{app}}",cluster="{{cluster}}"}[2m]))',
      ]
    : [
        '# No analysis: the backend allows no Prometheus server to query',
        '# (fleet.analysis.prometheus.allowedAddresses).',
      ];
  return [
    '# Waves run in order; each cluster of a wave goes through the canary steps.',
    'waves:',
    ...waves,
    'canary:',
    '  steps:',
    '    - setWeight: 20',
    '    - pause: {} # waits for Promote',
    '    - setWeight: 60',
    '    - pause: { duration: 30s }',
    '    - setWeight: 100',
    '  maxSurge: 25%',
    '  maxUnavailable: 0',
    ...analysis,
    'rollback: { enabled: true, timeout: 15m }',
    '',
  ].join('\n');
}
