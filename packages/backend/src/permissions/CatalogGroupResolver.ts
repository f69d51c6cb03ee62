import {
  AuthService,
  BackstageCredentials,
  LoggerService,
  UserInfoService,
} from '@backstage/backend-plugin-api';
import { RELATION_MEMBER_OF } from '@backstage/catalog-model';
import { toError } from '@backstage/errors';
import { CatalogService } from '@backstage/plugin-catalog-node';

/** How long a user's groups, as read from the catalog, are reused before asking it again. */
export const DEFAULT_GROUPS_CACHE_TTL_MS = 10_000;

type CacheEntry = {
  /** The user and their groups, or undefined when the catalog does not know the user. */
  claims: Promise<string[] | undefined>;
  expiresAt: number;
};

/**
 * Who a user is and which groups they belong to, read from the catalog when a permission is
 * decided, not from the ownership claims that sign-in froze into their token.
 *
 * A token carries the groups the catalog knew at sign-in: a user who signed in before the catalog
 * read the org (the first seconds after a start), or before someone added them to a group, would
 * otherwise be refused for the token's whole lifetime, and one removed from a group would keep its
 * rights as long. So, at decision time:
 *
 * - when the catalog holds the user's entity, the claims are the user and the groups it is a
 *   direct member of (its `memberOf` relations, which the catalog stitches from both the user's
 *   `spec.memberOf` and the groups' `spec.members`), as Backstage's default sign-in resolvers
 *   compute them;
 * - when it does not (a sign-in resolver that issues tokens without a catalog user), or when the
 *   catalog cannot be read, the token's claims are all there is, and they are used.
 *
 * Each user's answer is reused for a short time (10 s by default) so that a burst of decisions
 * (a page checking every row's buttons) costs one catalog read; concurrent decisions share it.
 * Claims are lower-cased, as entity refs compare case-insensitively.
 */
export class CatalogGroupResolver {
  private readonly cache = new Map<string, CacheEntry>();

  private constructor(
    private readonly catalog: CatalogService,
    private readonly auth: AuthService,
    private readonly userInfo: UserInfoService,
    private readonly logger: LoggerService,
    private readonly ttlMs: number,
  ) {}

  static create(deps: {
    catalog: CatalogService;
    auth: AuthService;
    userInfo: UserInfoService;
    logger: LoggerService;
    /** How long an answer is reused; 0 asks the catalog at every decision. */
    cacheTtlMs?: number;
  }): CatalogGroupResolver {
    return new CatalogGroupResolver(
      deps.catalog,
      deps.auth,
      deps.userInfo,
      deps.logger,
      deps.cacheTtlMs ?? DEFAULT_GROUPS_CACHE_TTL_MS,
    );
  }

  /** The user's ref and groups, lower-cased: the catalog's word when it knows the user. */
  async claims(credentials: BackstageCredentials): Promise<string[]> {
    if (this.auth.isPrincipal(credentials, 'user')) {
      const fromCatalog = await this.fromCatalog(
        credentials.principal.userEntityRef,
      );
      if (fromCatalog) {
        return fromCatalog;
      }
    }
    const { userEntityRef, ownershipEntityRefs } =
      await this.userInfo.getUserInfo(credentials);
    return lowerCased([userEntityRef, ...ownershipEntityRefs]);
  }

  private fromCatalog(userEntityRef: string): Promise<string[] | undefined> {
    const key = userEntityRef.toLocaleLowerCase('en-US');
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > now) {
      return cached.claims;
    }
    const claims = this.read(userEntityRef);
    if (this.ttlMs > 0) {
      this.cache.set(key, { claims, expiresAt: now + this.ttlMs });
      // Keep the cache to the users seen recently.
      for (const [k, entry] of this.cache) {
        if (entry.expiresAt <= now) this.cache.delete(k);
      }
    }
    return claims;
  }

  private async read(userEntityRef: string): Promise<string[] | undefined> {
    try {
      const entity = await this.catalog.getEntityByRef(userEntityRef, {
        credentials: await this.auth.getOwnServiceCredentials(),
      });
      if (!entity) {
        return undefined;
      }
      const groups = (entity.relations ?? [])
        .filter(relation => relation.type === RELATION_MEMBER_OF)
        .map(relation => relation.targetRef);
      return lowerCased([userEntityRef, ...groups]);
    } catch (error) {
      // Not cached: the next decision asks again.
      this.cache.delete(userEntityRef.toLocaleLowerCase('en-US'));
      this.logger.warn(
        `Could not read ${userEntityRef}'s groups from the catalog, deciding on the token's claims: ${
          toError(error).message
        }`,
      );
      return undefined;
    }
  }
}

function lowerCased(refs: string[]): string[] {
  return [...new Set(refs.map(ref => ref.toLocaleLowerCase('en-US')))];
}
