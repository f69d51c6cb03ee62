import { CanaryTarget, rolloutAnalysisTemplates } from './canaryObjects';

describe('rolloutAnalysisTemplates', () => {
  it('gives Argo the Prometheus thresholds only, not a template judged against a baseline', () => {
    const prometheus = { address: 'http://prometheus:9090', query: 'q' };
    const target = {
      analysis: {
        templates: [
          {
            name: 'threshold',
            successCondition: 'true',
            provider: { prometheus },
          },
          {
            name: 'judged',
            compare: { baseline: true, direction: 'increase' },
            provider: { prometheus },
          },
          {
            name: 'module',
            successCondition: 'true',
            provider: { datadog: {} },
          },
        ],
      },
    } as unknown as CanaryTarget;
    expect(rolloutAnalysisTemplates(target).map(t => t.name)).toEqual([
      'threshold',
    ]);
  });
});
