/*
 * The clusters an application's placement selects: one reading, in `@cnp/plugin-fleet-common`,
 * for the reconciler and for the Deploy dialog that says where the placement takes a component.
 */
export {
  hasPlacement,
  placementTargets,
  type AnnotatedPlacement,
} from '@cnp/plugin-fleet-common';
