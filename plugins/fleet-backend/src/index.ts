export { fleetPlugin as default } from './plugin';
