import type { AuthService, LoggerService } from '@backstage/backend-plugin-api';
import type { CatalogService } from '@backstage/plugin-catalog-node';
import { asError } from '../util/errors';

/**
 * Reads a catalog entity's annotations: empty when the catalog does not know the entity; throws
 * when the catalog cannot be read, so that nobody takes an outage for "no annotations".
 */
export type EntityAnnotationReader = (
  entityRef: string,
) => Promise<Record<string, string>>;

/**
 * Reads the annotations of components (Fleet's: `cnp.io/image`, `cnp.io/clusters`,
 * `cnp.io/cluster-selector`) from the catalog with Fleet's own service credentials, one lookup
 * for all of them. A catalog that cannot be reached is logged and thrown: a deploy then reads
 * no image from it, and the reconcile leaves placement as it is (it never prunes on an outage).
 */
export function createEntityAnnotationReader(options: {
  catalog: CatalogService;
  auth: AuthService;
  logger: LoggerService;
}): EntityAnnotationReader {
  const { catalog, auth, logger } = options;
  return async entityRef => {
    try {
      const entity = await catalog.getEntityByRef(entityRef, {
        credentials: await auth.getOwnServiceCredentials(),
      });
      return entity?.metadata.annotations ?? {};
    } catch (error) {
      logger
        .child({ entityRef })
        .warn(
          `Could not read the annotations of ${entityRef} from the catalog`,
          asError(error),
        );
      throw error;
    }
  };
}
