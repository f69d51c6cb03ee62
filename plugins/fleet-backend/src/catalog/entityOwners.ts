import type { AuthService } from '@backstage/backend-plugin-api';
import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import type { CatalogService } from '@backstage/plugin-catalog-node';
import { FLEET_ANNOTATION_DEPLOYERS } from '@cnp/plugin-fleet-common';

/** How long an owner read from the catalog is reused. */
const OWNER_TTL_MS = 10_000;

/**
 * What the catalog says of a component for the project rules, as full, lower-case entity refs:
 * its owner (`spec.owner`) and the group its `cnp.io/deployers` annotation opens its deploys to.
 */
export interface EntityOwnership {
  owner?: string;
  /** Set when the annotation is (and not empty); its text as written when it is no entity ref. */
  deployers?: string;
}

/** A ref as the catalog's relations read it, relative to the entity's namespace. */
function fullRef(raw: unknown, namespace: string): string | undefined {
  if (typeof raw !== 'string' || !raw.trim()) return undefined;
  try {
    return stringifyEntityRef(
      parseEntityRef(raw.trim(), {
        defaultKind: 'group',
        defaultNamespace: namespace,
      }),
    ).toLocaleLowerCase('en-US');
  } catch {
    return undefined;
  }
}

/**
 * Reads a component's owner and deployer group from the catalog with Fleet's own service
 * credentials, as full, lower-case entity refs (`owner: payments` on a component of namespace
 * `shop` is `group:shop/payments`, as the catalog's own relations read it); no owner when the
 * catalog does not know the entity or it names none. Reused for 10 s (every apply asks) unless
 * asked `fresh`, which reads the catalog now and keeps that read. A catalog that cannot be read
 * throws: nobody is let into a project on an outage.
 */
export function createEntityOwnerReader(options: {
  catalog: CatalogService;
  auth: AuthService;
  now?: () => number;
}): (
  entityRef: string,
  options?: { fresh?: boolean },
) => Promise<EntityOwnership> {
  const { catalog, auth } = options;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { read: EntityOwnership; at: number }>();
  return async (entityRef, readOptions) => {
    const hit = cache.get(entityRef);
    if (!readOptions?.fresh && hit && now() - hit.at < OWNER_TTL_MS) {
      return hit.read;
    }
    const entity = await catalog.getEntityByRef(entityRef, {
      credentials: await auth.getOwnServiceCredentials(),
    });
    const read: EntityOwnership = {};
    if (entity) {
      const namespace = entity.metadata.namespace ?? 'default';
      read.owner = fullRef(entity.spec?.owner, namespace);
      const deployers =
        entity.metadata.annotations?.[FLEET_ANNOTATION_DEPLOYERS];
      if (typeof deployers === 'string' && deployers.trim()) {
        read.deployers = fullRef(deployers, namespace) ?? deployers;
      }
    }
    if (cache.size > 10_000) cache.clear();
    cache.set(entityRef, { read, at: now() });
    return read;
  };
}
