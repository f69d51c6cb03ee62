import { InputError } from '@backstage/errors';
import type {
  AnalysisMeasurement,
  AnalysisTemplate,
  ReleaseStrategy,
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

  /** The names a template's `provider` may have: one per provider. */
  names(): string[] {
    return [...this.byType.keys()].sort();
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
    const config = type ? template.provider[type] : undefined;
    if (!provider || !config) {
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
      config,
      context,
      timeoutMs: options.timeoutMs ?? 10_000,
    });
  }
}

/**
 * Refuses (400) a strategy whose analysis names a provider that is not registered: each
 * template's `provider` has one key, the name of one of `registered` (Fleet's `prometheus`, or
 * one a backend module added).
 */
export function checkAnalysisProviders(
  strategy: Pick<ReleaseStrategy, 'analysis'> | undefined,
  registered: readonly string[],
): void {
  strategy?.analysis?.templates.forEach((template, index) => {
    const name = Object.keys(template.provider)[0];
    if (registered.includes(name)) return;
    throw new InputError(
      `Invalid release: strategy.analysis.templates.${index}.provider: '${name}' is not a registered analysis provider (registered: ${registered.join(
        ', ',
      )})`,
    );
  });
}
