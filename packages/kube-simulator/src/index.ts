/**
 * Simulated Kubernetes API servers for Fleet's tests, demo and benchmarks.
 *
 * @packageDocumentation
 */
export { KubeSimulator, DEFAULT_CRDS } from './KubeSimulator';
export type {
  DriftChange,
  KubeSimulatorOptions,
  WatchOptions,
} from './KubeSimulator';
export type { Fault, FaultMode } from './faults';
export type {
  HistoryEntry,
  HistoryFilter,
  SimObject,
  WriteVerb,
} from './store';
export type {
  PrometheusAnswer,
  PrometheusFaultMode,
  PrometheusMatch,
  PrometheusRule,
  PrometheusValue,
} from './prometheus';
export type { PrometheusDistribution, PrometheusSeries } from './promSeries';
export { KNOWN_CRDS } from './resources';
export { useSimulator } from './useSimulator';
export { meshTraffic } from './meshTraffic';
export { gatewayTraffic } from './gatewayTraffic';
export type { MeshDestinationShare, MeshTraffic } from './meshTraffic';
