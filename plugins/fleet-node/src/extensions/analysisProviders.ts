import { createExtensionPoint } from '@backstage/backend-plugin-api';
import type {
  AnalysisMeasurement,
  AnalysisTemplate,
} from '@cnp/plugin-fleet-common';

/**
 * What an analysis query's placeholders (`{{cluster}}`, `{{app}}`, `{{namespace}}`,
 * `{{revision}}`, `{{version}}`) are filled with, for one cluster.
 *
 * @public
 */
export interface FleetAnalysisContext {
  cluster: string;
  app: string;
  namespace: string;
  /** The revision the canary runs. */
  revision: number;
  /** The image tag (or digest) the canary runs. */
  version: string;
}

/**
 * One source of analysis measurements, for the templates whose `provider` names its type
 * (Fleet's own: `prometheus`, for `provider: { prometheus: { address, query } }`; a module's
 * `x`, for `provider: { x: { ...its settings } }`). A release whose analysis names a type no
 * provider has is refused with a 400.
 *
 * @public
 */
export interface FleetAnalysisProvider {
  /** The key of a template's `provider` it measures. */
  readonly type: string;
  /**
   * One measurement of the template on one cluster: the success condition true is `Successful`,
   * false `Failed`; a measurement that could not be taken (no answer, an error answer) is `Error`
   * with the message `unreachable` or `error`, an answer with nothing to judge `Inconclusive`
   * with the message `no data` (neither is ever a success). Fleet keeps only the phase, the value
   * and those words; an `Inconclusive` one that says `unreachable` or `error` is an `Error`, and a
   * rejection, or a phase Fleet does not know, is an `Error` (`error`). Errors in a row abort a
   * release past the template's `consecutiveErrorLimit`; inconclusive ones pause it. The
   * provider's own text goes to the backend's log, never to the release.
   */
  measure(options: {
    template: AnalysisTemplate;
    /**
     * The template's settings for this provider (`template.provider[type]`), as the release gave
     * them: an object, which the provider checks itself (settings it cannot use: `Error`).
     */
    config: Record<string, unknown>;
    context: FleetAnalysisContext;
    /** How long the measurement may take. */
    timeoutMs: number;
  }): Promise<AnalysisMeasurement>;
}

/**
 * The interface of {@link fleetAnalysisProvidersExtensionPoint}.
 *
 * @public
 */
export interface FleetAnalysisProvidersExtensionPoint {
  /** Adds analysis providers; a type already taken (`prometheus` is Fleet's) is an error at startup. */
  addAnalysisProvider(...providers: FleetAnalysisProvider[]): void;
}

/**
 * An extension point to add sources of analysis measurements to Fleet's progressive releases.
 *
 * @public
 */
export const fleetAnalysisProvidersExtensionPoint =
  createExtensionPoint<FleetAnalysisProvidersExtensionPoint>({
    id: 'fleet.analysis-providers',
  });
