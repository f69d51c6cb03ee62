import type { EntitiesSearchFilter } from '@backstage/plugin-catalog-node';
import { catalogEntityPermissionResourceRef } from '@backstage/plugin-catalog-node/alpha';
import { createPermissionRule } from '@backstage/plugin-permission-node';
import { FLEET_ANNOTATION_IMAGE } from '@cnp/plugin-fleet-common';

/**
 * A catalog permission rule of Fleet's own: the entity is a component that Fleet can deploy, i.e.
 * it carries the `cnp.io/image` annotation. The Fleet catalog module registers it with the
 * catalog, which evaluates it in conditional decisions on `fleet.deployment.create`.
 *
 * @public
 */
export const isFleetDeployable = createPermissionRule({
  name: 'IS_FLEET_DEPLOYABLE',
  description: `Allow components that Fleet can deploy: those with the ${FLEET_ANNOTATION_IMAGE} annotation`,
  resourceRef: catalogEntityPermissionResourceRef,
  apply: entity =>
    entity.kind.toLocaleLowerCase('en-US') === 'component' &&
    typeof entity.metadata.annotations?.[FLEET_ANNOTATION_IMAGE] === 'string' &&
    entity.metadata.annotations[FLEET_ANNOTATION_IMAGE] !== '',
  toQuery: () => ({
    allOf: [
      { key: 'kind', values: ['component'] },
      { key: `metadata.annotations.${FLEET_ANNOTATION_IMAGE}` },
    ] as [EntitiesSearchFilter, EntitiesSearchFilter],
  }),
});
