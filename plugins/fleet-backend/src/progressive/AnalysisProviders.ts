import type { LoggerService } from '@backstage/backend-plugin-api';
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
import { asError } from '../util/errors';
import { measure } from './analysis';

/** The providers whose results are Fleet's own words already: its Prometheus. */
const FLEETS_OWN = new WeakSet<FleetAnalysisProvider>();

/** Fleet's own analysis provider: a Prometheus query (`provider.prometheus`). */
export function createPrometheusAnalysisProvider(
  options: {
    /** Only these Prometheus servers are queried (`fleet.analysis.prometheus.allowedAddresses`). */
    allowedAddresses?: readonly string[];
    fetchImpl?: typeof fetch;
  } = {},
): FleetAnalysisProvider {
  const provider: FleetAnalysisProvider = {
    type: 'prometheus',
    measure: ({ template, context, timeoutMs }) =>
      measure(template, context, { ...options, timeoutMs }),
  };
  FLEETS_OWN.add(provider);
  return provider;
}

const PHASES: readonly string[] = [
  'Successful',
  'Failed',
  'Inconclusive',
  'Error',
];

/**
 * A module provider's result in Fleet's own words, the only ones stored with a release and shown:
 * the phase and the value it measured; a success or a failure has no message, an inconclusive
 * measurement `no data`, an error `unreachable` or `error`. An inconclusive result that says
 * `unreachable` or `error` could not be taken: it is an error. No result, or a phase Fleet does
 * not know, is an error too. Whatever else the provider wrote (an error text naming a host or a
 * credential) is not kept. The template, the cluster and the condition are those measured,
 * whatever the provider answered.
 */
function inFleetWords(
  result: Partial<AnalysisMeasurement> | undefined,
  template: AnalysisTemplate,
  context: FleetAnalysisContext,
): AnalysisMeasurement {
  const base = {
    template: template.name,
    cluster: context.cluster,
    condition: template.successCondition,
    at: new Date().toISOString(),
  };
  const value =
    typeof result?.value === 'number' && Number.isFinite(result.value)
      ? result.value
      : null;
  const phase = PHASES.includes(result?.phase as string)
    ? (result!.phase as AnalysisMeasurement['phase'])
    : 'Error';
  if (phase === 'Successful' || phase === 'Failed') {
    return { ...base, phase, value };
  }
  const word = result?.message;
  if (phase === 'Inconclusive' && word !== 'unreachable' && word !== 'error') {
    return { ...base, phase, value, message: 'no data' };
  }
  return {
    ...base,
    phase: 'Error',
    value,
    message: word === 'unreachable' ? word : 'error',
  };
}

/**
 * The analysis providers a release's templates are measured by, by the key of each template's
 * `provider`: those added through the extension point and Fleet's own Prometheus.
 */
export class AnalysisProviders {
  private constructor(
    private readonly byType: Map<string, FleetAnalysisProvider>,
    private readonly logger: LoggerService | undefined,
  ) {}

  static create(options: {
    providers: FleetAnalysisProvider[];
    /** Where a module provider's own text goes (never its settings): it is not stored. */
    logger?: LoggerService;
  }): AnalysisProviders {
    const byType = new Map<string, FleetAnalysisProvider>();
    for (const provider of options.providers) {
      if (byType.has(provider.type))
        throw new Error(`Analysis provider '${provider.type}' is added twice`);
      byType.set(provider.type, provider);
    }
    return new AnalysisProviders(byType, options.logger);
  }

  /** The names a template's `provider` may have: one per provider. */
  names(): string[] {
    return [...this.byType.keys()].sort();
  }

  /**
   * One measurement of the template on one cluster, by the provider its `provider` names. A type
   * no provider measures is an error (`error`), never a success, and so is a provider that
   * throws or does not answer in time. A module provider's result is kept in Fleet's words only (see `inFleetWords`); its
   * own text goes to the log (at debug; at warn when it threw).
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
        phase: 'Error',
        value: null,
        message: 'error',
      };
    }
    let result: AnalysisMeasurement;
    const timeoutMs = options.timeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      // A provider that never answers must not hold the release's tick: past its time (and a
      // grace second) the measurement is an error, as a rejection is.
      result = await Promise.race([
        provider.measure({ template, config, context, timeoutMs }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${timeoutMs + 1_000} ms`)),
            timeoutMs + 1_000,
          );
        }),
      ]);
    } catch (error) {
      // A rejection is an error measurement, counted like an error answer; its text stays here.
      this.logger?.warn(
        `Analysis provider '${type}' could not measure ${template.name} on ${
          context.cluster
        }: ${asError(error).message}`,
      );
      return inFleetWords(undefined, template, context);
    } finally {
      clearTimeout(timer);
    }
    if (FLEETS_OWN.has(provider)) return result;
    const measured = inFleetWords(result, template, context);
    if (result?.message && result.message !== measured.message) {
      this.logger?.debug(
        `Analysis provider '${type}' measured ${template.name} on ${context.cluster}: ${measured.phase} (${result.message})`,
      );
    }
    return measured;
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
