/**
 * Simulated Kubernetes API servers for Fleet's tests, demo and benchmarks.
 *
 * @packageDocumentation
 */
export { KubeSimulator } from './KubeSimulator';
export type { DriftChange, KubeSimulatorOptions } from './KubeSimulator';
export type { Fault, FaultMode } from './faults';
export type { SimObject } from './store';
