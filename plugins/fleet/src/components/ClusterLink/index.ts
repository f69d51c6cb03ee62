export { ClusterLink } from './ClusterLink';
