export { ActorName, actorText, EntityName, humanizedRef } from './EntityName';
