import type { AuthService, LoggerService } from '@backstage/backend-plugin-api';
import type { CatalogService } from '@backstage/plugin-catalog-node';

/** Reads one annotation of a catalog entity; undefined when the entity or the annotation is absent. */
export type EntityAnnotationReader = (
  entityRef: string,
  annotation: string,
) => Promise<string | undefined>;

/**
 * Reads the Fleet annotations of components (`cnp.io/image`, `cnp.io/cluster-selector`) from the
 * catalog with Fleet's own service credentials. A catalog that cannot be reached is logged and
 * read as no annotation: the caller then says what is missing, instead of failing.
 */
export function createEntityAnnotationReader(options: {
  catalog: CatalogService;
  auth: AuthService;
  logger: LoggerService;
}): EntityAnnotationReader {
  const { catalog, auth, logger } = options;
  return async (entityRef, annotation) => {
    try {
      const entity = await catalog.getEntityByRef(entityRef, {
        credentials: await auth.getOwnServiceCredentials(),
      });
      const value = entity?.metadata.annotations?.[annotation]?.trim();
      return value ? value : undefined;
    } catch (error) {
      logger.warn(
        `Could not read annotation ${annotation} of ${entityRef} from the catalog: ${
          (error as Error).message
        }`,
      );
      return undefined;
    }
  };
}
