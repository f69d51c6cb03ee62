import type {
  AnalysisMeasurement,
  AnalysisTemplate,
} from '@cnp/plugin-fleet-common';
import type {
  FleetAnalysisContext,
  FleetAnalysisProvider,
} from '@cnp/plugin-fleet-node';
import { measure } from './analysis';

/** Fleet's own analysis provider: a Prometheus query (`provider.prometheus`). */
export function createPrometheusAnalysisProvider(
  options: {
    /** Only these Prometheus servers are queried (`fleet.analysis.prometheus.allowedAddresses`). */
    allowedAddresses?: readonly string[];
    fetchImpl?: typeof fetch;
  } = {},
): FleetAnalysisProvider {
  return {
    type: 'prometheus',
    measure: ({ template, context, timeoutMs }) =>
      measure(template, context, { ...options, timeoutMs }),
  };
}

/**
 * The analysis providers a release's templates are measured by, by the key of each template's
 * `provider`: those added through the extension point and Fleet's own Prometheus.
 */
export class AnalysisProviders {
  private constructor(
    private readonly byType: Map<string, FleetAnalysisProvider>,
  ) {}

  static create(options: {
    providers: FleetAnalysisProvider[];
  }): AnalysisProviders {
    const byType = new Map<string, FleetAnalysisProvider>();
    for (const provider of options.providers) {
      if (byType.has(provider.type))
        throw new Error(`Analysis provider '${provider.type}' is added twice`);
      byType.set(provider.type, provider);
    }
    return new AnalysisProviders(byType);
  }

  /**
   * One measurement of the template on one cluster, by the provider its `provider` names. A type
   * no provider measures is inconclusive (`error`), never a success.
   */
  async measure(
    template: AnalysisTemplate,
    context: FleetAnalysisContext,
    options: { timeoutMs?: number } = {},
  ): Promise<AnalysisMeasurement> {
    const type = Object.keys(template.provider ?? {})[0];
    const provider = type ? this.byType.get(type) : undefined;
    if (!provider) {
      return {
        template: template.name,
        cluster: context.cluster,
        condition: template.successCondition,
        at: new Date().toISOString(),
        phase: 'Inconclusive',
        value: null,
        message: 'error',
      };
    }
    return provider.measure({
      template,
      context,
      timeoutMs: options.timeoutMs ?? 10_000,
    });
  }
}
