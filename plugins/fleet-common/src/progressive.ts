/**
 * Progressive delivery across the fleet: the strategy a release may carry, and the state of a
 * release that runs one. The shapes are the Fleet API spec's: a change of shape is made there.
 */
import type { FleetApiSchema } from './types';

/**
 * A release's strategy, after Argo Rollouts' canary, across clusters.
 *
 * @public
 */
export interface ReleaseStrategy extends FleetApiSchema<'ReleaseStrategy'> {}

/**
 * A wave: the clusters that run the canary together. Waves run in order; a wave starts only
 * once every cluster of the one before it reached 100 % with its analysis passing.
 *
 * @public
 */
export type ReleaseWave = NonNullable<ReleaseStrategy['waves']>[number];

/**
 * One canary step on a cluster: a weight, or a pause (`{}` waits for promote).
 *
 * @public
 */
export type CanaryStep = ReleaseStrategy['canary']['steps'][number];

/** @public */
export type AnalysisTemplate = NonNullable<
  ReleaseStrategy['analysis']
>['templates'][number];

/**
 * How a template judges the canary against a baseline of the stable version (the Mann-Whitney U
 * test) instead of a threshold on the canary alone; its query uses `{{variant}}`, which is
 * `canary` or `baseline`.
 *
 * @public
 */
export interface AnalysisCompare extends FleetApiSchema<'AnalysisCompare'> {}

/**
 * A step's judgment of the canary against its baseline on one cluster: each metric's result
 * and the score, the weighted share of passing metrics.
 *
 * @public
 */
export interface CanaryJudgment extends FleetApiSchema<'CanaryJudgment'> {}

/**
 * An analysis template's provider: one key, the name of a registered analysis provider
 * (Fleet's own is `prometheus`; backend modules add others through the
 * `fleet.analysis-providers` extension point), whose value is that provider's settings.
 *
 * @public
 */
export type AnalysisProviderSettings = AnalysisTemplate['provider'];

/**
 * How a cluster runs its canary, with Fleet's own traffic providers: an Argo Rollout where it
 * serves them, Istio route weights where asked and served, else a stable and a `-canary`
 * Deployment sized by replicas. A traffic provider a backend module adds (the
 * `fleet.traffic-providers` extension point) is asked first; its id is then the cluster's mode.
 *
 * @public
 */
export const CANARY_MODES = ['rollout', 'istio', 'replicas'] as const;

/** @public */
export type CanaryMode = (typeof CANARY_MODES)[number];

/**
 * One analysis measurement.
 *
 * @public
 */
export interface AnalysisMeasurement
  extends FleetApiSchema<'AnalysisMeasurement'> {}

/**
 * One cluster's progress in a progressive release.
 *
 * @public
 */
export interface CanaryClusterProgress
  extends FleetApiSchema<'CanaryClusterProgress'> {}

/**
 * Why a progressive release aborted: the metric, its value, the condition and the cluster, or
 * who aborted it.
 *
 * @public
 */
export interface ReleaseAbortReason
  extends FleetApiSchema<'ReleaseAbortReason'> {}

/**
 * The running state of a release with a strategy.
 *
 * @public
 */
export interface ReleaseProgress extends FleetApiSchema<'ReleaseProgress'> {}
