/**
 * Test harness shared by the Fleet packages.
 *
 * @packageDocumentation
 */
export { createTestDatabases } from './databases';
export { startSimulator } from './simulator';
export { snapshotFleetTables, startFleetTestBackend } from './testBackend';
