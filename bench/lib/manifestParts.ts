/*
 * The parts of the backend plugin that deploy a component's own manifests, for
 * bench/manifests.ts: the object applier (`ObjectSetApplier`, what `plugin.ts` creates with its
 * defaults), the render that gives every object Fleet's marks (`renderRepositoryObjects`), and
 * the generated workload (`buildManifests`, `objectsOf`). They are not on the plugin's public
 * `testUtils` entry point, so they are taken from its source, as bench/lib/cardLoadBytes.ts
 * takes the card's code; nothing here changes them.
 */
export { ObjectSetApplier } from '../../plugins/fleet-backend/src/deploy/ObjectSetApplier';
export type {
  ObjectChange,
  ObjectSetTarget,
} from '../../plugins/fleet-backend/src/deploy/ObjectSetApplier';
export { renderRepositoryObjects } from '../../plugins/fleet-backend/src/deploy/repositoryObjects';
export { buildManifests } from '../../plugins/fleet-backend/src/deploy/manifests';
export type { Manifests } from '../../plugins/fleet-backend/src/deploy/manifests';
export { objectsOf } from '../../plugins/fleet-backend/src/deploy/generatedWorkload';
export { ManifestReader } from '../../plugins/fleet-backend/src/repository/ManifestReader';
