import type {
  AuthService,
  BackstageCredentials,
  UserInfoService,
} from '@backstage/backend-plugin-api';
import { RELATION_MEMBER_OF } from '@backstage/catalog-model';
import type { CatalogService } from '@backstage/plugin-catalog-node';
import type { Decider } from '../stages/gates';

const lower = (ref: string) => ref.toLocaleLowerCase('en-US');

/**
 * Who is deciding on a release, and the groups they belong to: read from the catalog at decision
 * time (the user's `memberOf` relations, which the catalog stitches from both the user's
 * `spec.memberOf` and the groups' `spec.members`), not from the ownership claims frozen into the
 * token at sign-in, so that someone added to (or removed from) the release managers counts as
 * such at once. A user the catalog does not know is left with the token's claims. A service
 * principal is itself and belongs to no group.
 */
export function createDeciderReader(options: {
  catalog: CatalogService;
  auth: AuthService;
  userInfo: UserInfoService;
}): (credentials: BackstageCredentials) => Promise<Decider> {
  const { catalog, auth, userInfo } = options;
  return async credentials => {
    if (!auth.isPrincipal(credentials, 'user')) {
      const principal = credentials.principal as { subject?: string };
      return { ref: principal.subject ?? 'unknown', groups: [] };
    }
    const ref = credentials.principal.userEntityRef;
    const entity = await catalog.getEntityByRef(ref, {
      credentials: await auth.getOwnServiceCredentials(),
    });
    if (entity) {
      const groups = (entity.relations ?? [])
        .filter(r => r.type === RELATION_MEMBER_OF)
        .map(r => lower(r.targetRef));
      return { ref: lower(ref), groups };
    }
    const info = await userInfo.getUserInfo(credentials);
    return {
      ref: lower(ref),
      groups: info.ownershipEntityRefs.map(lower),
    };
  };
}
