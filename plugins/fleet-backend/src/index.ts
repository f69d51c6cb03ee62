/**
 * The Fleet backend plugin.
 *
 * @packageDocumentation
 */
export { fleetPlugin as default } from './plugin';
