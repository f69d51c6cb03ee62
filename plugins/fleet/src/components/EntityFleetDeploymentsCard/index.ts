export {
  EntityFleetDeploymentsCard,
  annotatedClusters,
} from './EntityFleetDeploymentsCard';
