/**
 * The one harness that builds Fleet from its real parts against the kube simulator and a real
 * database, shared by the packages' tests, the benchmarks and the chaos suite.
 *
 * @packageDocumentation
 */
export { onCleanup, runCleanup, runMain, runScoped } from './cleanup';
export { createTestDatabases, createTestStores } from './databases';
export {
  classifyStatement,
  createFleet,
  formatLogRecord,
  harnessHealthConfig,
  recordingLogger,
  seedDeployment,
  seedDeployments,
  statementCounter,
  type LogRecord,
  type ProbeFn,
} from './fleet';
export {
  createTempDatabase,
  PG_URL,
  postgresAnswers,
  type TempDatabase,
} from './pg';
export {
  startBackendProcess,
  type BackendProcess,
} from './processes/backendProcess';
export { DISCOVER_CHILD_SCRIPT } from './processes/scripts';
export {
  forkTs,
  rpc,
  startSimProcess,
  type SimProcess,
} from './processes/simProcess';
export { startSimulator, useSimulator } from './simulator';
export {
  loadAverage,
  machineCpu,
  machineLine,
  median,
  establishedConnections,
  ms,
  percentile,
  processCpuSeconds,
  processMemory,
  threadCpuByGroup,
  threadCpuDelta,
  threadCpuSeconds,
  sleep,
  table,
} from './stats';
export { snapshotFleetTables, startFleetTestBackend } from './testBackend';
