import type { Entity } from '@backstage/catalog-model';

/**
 * True for components, which Fleet can deploy.
 *
 * @public
 */
export function isFleetComponentEntity(entity: Entity): boolean {
  return entity.kind.toLocaleLowerCase('en-US') === 'component';
}
