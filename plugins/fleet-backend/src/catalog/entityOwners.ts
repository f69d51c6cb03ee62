import type { AuthService } from '@backstage/backend-plugin-api';
import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import type { CatalogService } from '@backstage/plugin-catalog-node';

/** How long an owner read from the catalog is reused. */
const OWNER_TTL_MS = 10_000;

/**
 * Reads a component's owner from the catalog with Fleet's own service credentials, as a full,
 * lower-case entity ref (`owner: payments` on a component of namespace `shop` is
 * `group:shop/payments`, as the catalog's own relations read it); undefined when the catalog
 * does not know the entity or it names no owner. Reused for 10 s (every apply asks). A catalog
 * that cannot be read throws: nobody is let into a project on an outage.
 */
export function createEntityOwnerReader(options: {
  catalog: CatalogService;
  auth: AuthService;
  now?: () => number;
}): (entityRef: string) => Promise<string | undefined> {
  const { catalog, auth } = options;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { owner: string | undefined; at: number }>();
  return async entityRef => {
    const hit = cache.get(entityRef);
    if (hit && now() - hit.at < OWNER_TTL_MS) return hit.owner;
    const entity = await catalog.getEntityByRef(entityRef, {
      credentials: await auth.getOwnServiceCredentials(),
    });
    let owner: string | undefined;
    const raw = entity?.spec?.owner;
    if (typeof raw === 'string' && raw.trim()) {
      try {
        owner = stringifyEntityRef(
          parseEntityRef(raw, {
            defaultKind: 'group',
            defaultNamespace: entity!.metadata.namespace ?? 'default',
          }),
        ).toLocaleLowerCase('en-US');
      } catch {
        owner = undefined;
      }
    }
    if (cache.size > 10_000) cache.clear();
    cache.set(entityRef, { owner, at: now() });
    return owner;
  };
}
