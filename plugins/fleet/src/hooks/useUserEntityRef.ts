import { identityApiRef, useApi } from '@backstage/core-plugin-api';
import { useEffect, useState } from 'react';

/** Who the signed-in user is, as the identity API answers. */
export interface SignedInUser {
  loading: boolean;
  /** Their entity ref; undefined when the identity API cannot tell. */
  userEntityRef?: string;
  /**
   * The refs their token claims ownership through: themselves and the groups they belong to.
   * Undefined when the identity API cannot tell.
   */
  ownershipEntityRefs?: string[];
}

/**
 * The signed-in user's entity ref and ownership claims: `loading` until the identity API
 * answers; undefined when it cannot tell (the backend still refuses what the user may not do).
 */
export function useUserEntityRef(): SignedInUser {
  const identityApi = useApi(identityApiRef);
  const [state, setState] = useState<SignedInUser>({ loading: true });
  useEffect(() => {
    let live = true;
    identityApi
      .getBackstageIdentity()
      .then(identity => {
        if (live)
          setState({
            loading: false,
            userEntityRef: identity.userEntityRef,
            ownershipEntityRefs: identity.ownershipEntityRefs,
          });
      })
      .catch(() => {
        if (live) setState({ loading: false });
      });
    return () => {
      live = false;
    };
  }, [identityApi]);
  return state;
}
