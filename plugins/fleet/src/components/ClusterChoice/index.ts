export { ClusterChoice } from './ClusterChoice';
