export { ReleasePanel } from './ReleasePanel';
export { loadReleases } from './loadReleases';
