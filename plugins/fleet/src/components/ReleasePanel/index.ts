export { ReleasePanel } from './ReleasePanel';
