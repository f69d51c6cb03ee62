/**
 * The one harness that builds Fleet from its real parts against the kube simulator and a real
 * database, shared by the packages' tests, the benchmarks and the chaos suite.
 *
 * @packageDocumentation
 */
export { onCleanup, runCleanup, runMain, runScoped } from './cleanup';
// Fleet wired from its parts, the test databases and the test backend live with the plugin
// (its own tests use them); the harness passes them on to the benchmarks, the chaos suite and
// the other packages' tests.
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
export {
  classifyStatement,
  createFleet,
  createTestDatabases,
  createTestStores,
  formatLogRecord,
  harnessHealthConfig,
  recordingLogger,
  seedDeployment,
  seedDeployments,
  snapshotFleetTables,
  startFleetTestBackend,
  statementCounter,
  type LogRecord,
  type ProbeFn,
} from '@cnp/plugin-fleet-backend/testUtils';
export { useSimulator } from '@cnp/kube-simulator';
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
export { startSimulator } from './simulator';
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
