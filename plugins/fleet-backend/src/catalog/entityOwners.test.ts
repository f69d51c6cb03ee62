import { mockServices } from '@backstage/backend-test-utils';
import type { Entity } from '@backstage/catalog-model';
import type { CatalogService } from '@backstage/plugin-catalog-node';
import { createEntityOwnerReader } from './entityOwners';

describe('createEntityOwnerReader', () => {
  function catalogOf(entities: Map<string, Entity>) {
    const reads: string[] = [];
    const catalog = {
      getEntityByRef: async (ref: string) => {
        reads.push(ref);
        return entities.get(ref);
      },
    } as unknown as CatalogService;
    return { catalog, reads };
  }
  const ledger = (annotations: Record<string, string>): Entity => ({
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: { name: 'ledger', namespace: 'books', annotations },
    spec: { owner: 'Finance' },
  });

  it('reads the owner and the deployer group as full refs, reuses them for 10 s, and reads afresh when asked', async () => {
    const entities = new Map([
      ['component:books/ledger', ledger({ 'cnp.io/deployers': 'finance-ops' })],
    ]);
    const { catalog, reads } = catalogOf(entities);
    let clock = 0;
    const read = createEntityOwnerReader({
      catalog,
      auth: mockServices.auth(),
      now: () => clock,
    });
    await expect(read('component:books/ledger')).resolves.toEqual({
      owner: 'group:books/finance',
      deployers: 'group:books/finance-ops',
    });
    // Its author changes the annotation: a cached read still says what it said.
    entities.set(
      'component:books/ledger',
      ledger({ 'cnp.io/deployers': 'group:default/guests' }),
    );
    clock = 5_000;
    await expect(read('component:books/ledger')).resolves.toMatchObject({
      deployers: 'group:books/finance-ops',
    });
    expect(reads).toHaveLength(1);
    // A caller's request reads afresh, and later reads reuse that.
    await expect(
      read('component:books/ledger', { fresh: true }),
    ).resolves.toMatchObject({ deployers: 'group:default/guests' });
    await expect(read('component:books/ledger')).resolves.toMatchObject({
      deployers: 'group:default/guests',
    });
    expect(reads).toHaveLength(2);
    clock = 20_000;
    await read('component:books/ledger');
    expect(reads).toHaveLength(3);
    // Unknown to the catalog: neither owner nor deployers; an empty annotation is none.
    await expect(read('component:books/ghost')).resolves.toEqual({});
    entities.set('component:books/ledger', ledger({ 'cnp.io/deployers': ' ' }));
    await expect(
      read('component:books/ledger', { fresh: true }),
    ).resolves.toEqual({ owner: 'group:books/finance' });
  });
});
