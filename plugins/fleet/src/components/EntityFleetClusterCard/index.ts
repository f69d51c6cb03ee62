export {
  EntityFleetClusterCard,
  isFleetClusterEntity,
} from './EntityFleetClusterCard';
