import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { Entity } from '@backstage/catalog-model';
import { CatalogService } from '@backstage/plugin-catalog-node';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { CatalogGroupResolver } from './CatalogGroupResolver';

const guest = 'user:default/guest';

/** The guest as the catalog holds it once it has read the org: its memberOf relations. */
function guestEntity(groups: string[]): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'User',
    metadata: { name: 'guest', namespace: 'default' },
    spec: { memberOf: [] },
    relations: groups.map(targetRef => ({ type: 'memberOf', targetRef })),
  };
}

/**
 * A catalog whose content the test replaces (Backstage's catalog test double behind it), and
 * that counts how often it is read.
 */
function changingCatalog(entities: Entity[]) {
  let inner = catalogServiceMock({ entities });
  let failure: Error | undefined;
  const reads = { count: 0 };
  const catalog = {
    async getEntityByRef(ref: any, options: any) {
      reads.count += 1;
      if (failure) throw failure;
      return inner.getEntityByRef(ref, options);
    },
  } as Partial<CatalogService> as CatalogService;
  return {
    catalog,
    reads,
    set: (next: Entity[]) => {
      inner = catalogServiceMock({ entities: next });
    },
    fail: (error: Error | undefined) => {
      failure = error;
    },
  };
}

/** userInfo answering what the token says: the claims sign-in put in it. */
function tokenClaims(claims: string[]) {
  return mockServices.userInfo.mock({
    getUserInfo: async () => ({
      userEntityRef: guest,
      ownershipEntityRefs: claims,
    }),
  });
}

function resolver(
  catalog: CatalogService,
  claims: string[],
  cacheTtlMs?: number,
) {
  const logger = mockServices.logger.mock();
  return {
    logger,
    groups: CatalogGroupResolver.create({
      catalog,
      auth: mockServices.auth(),
      userInfo: tokenClaims(claims),
      logger,
      cacheTtlMs,
    }),
  };
}

describe('CatalogGroupResolver', () => {
  const credentials = mockCredentials.user(guest);
  afterEach(() => jest.useRealTimers());

  it("takes the user's groups from the catalog, not from the token", async () => {
    const { catalog } = changingCatalog([
      guestEntity(['group:default/Guests']),
    ]);
    // A token signed before the org was read: the user alone. Or one with a group since left.
    const { groups } = resolver(catalog, [guest, 'group:default/former']);
    expect(await groups.claims(credentials)).toEqual([
      guest,
      'group:default/guests',
    ]);
  });

  it('decides on the token’s claims when the catalog does not know the user', async () => {
    const { catalog } = changingCatalog([]);
    const { groups } = resolver(catalog, [guest, 'group:default/Oidc-Team']);
    expect(await groups.claims(credentials)).toEqual([
      guest,
      'group:default/oidc-team',
    ]);
  });

  it('reads the catalog once per user within the cache time, shared by concurrent decisions, and again after it', async () => {
    const world = changingCatalog([]);
    const { groups } = resolver(world.catalog, [guest], 300);
    // Date alone is held, the cache's clock: the 300 ms are measured on it, not on how fast a
    // loaded machine runs the test (timers and promises run as ever).
    jest.useFakeTimers({
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    const first = await Promise.all([
      groups.claims(credentials),
      groups.claims(credentials),
      groups.claims(credentials),
    ]);
    expect(first).toEqual([[guest], [guest], [guest]]);
    expect(world.reads.count).toBe(1);

    // The catalog reads the org: within the cache time the answer is the cached one…
    world.set([guestEntity(['group:default/guests'])]);
    expect(await groups.claims(credentials)).toEqual([guest]);
    expect(world.reads.count).toBe(1);
    // …and after it, the new membership, without signing in again.
    jest.setSystemTime(Date.now() + 350);
    expect(await groups.claims(credentials)).toEqual([
      guest,
      'group:default/guests',
    ]);
    expect(world.reads.count).toBe(2);
  });

  it('asks the catalog at every decision with a cache time of 0', async () => {
    const world = changingCatalog([]);
    const { groups } = resolver(world.catalog, [guest], 0);
    expect(await groups.claims(credentials)).toEqual([guest]);
    world.set([guestEntity(['group:default/guests'])]);
    expect(await groups.claims(credentials)).toEqual([
      guest,
      'group:default/guests',
    ]);
    expect(world.reads.count).toBe(2);
  });

  it('falls back on the token’s claims with a warning when the catalog cannot be read, and does not keep that answer', async () => {
    const world = changingCatalog([guestEntity(['group:default/guests'])]);
    const { groups, logger } = resolver(world.catalog, [guest], 60_000);
    world.fail(new Error('connect ECONNREFUSED'));
    expect(await groups.claims(credentials)).toEqual([guest]);
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringContaining(
        "Could not read user:default/guest's groups from the catalog",
      ),
    );
    world.fail(undefined);
    expect(await groups.claims(credentials)).toEqual([
      guest,
      'group:default/guests',
    ]);
  });
});
