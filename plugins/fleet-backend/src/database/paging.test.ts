import { createTestDatabases, createTestStores } from '../testing/databases';
import type { PageRequest } from './types';

// Keyset paging of the lists the API pages, and the cap on manual clusters.

jest.setTimeout(60_000);

const databases = createTestDatabases();

/** Reads a list page by page, each after the last key of the one before, as the API does. */
async function walk<T>(
  read: (page: PageRequest) => Promise<T[]>,
  keyOf: (item: T) => string[],
  limit: number,
): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let after: string[] | undefined;
  for (let pages = 1; ; pages++) {
    const page = await read({ limit, after });
    expect(page.length).toBeLessThanOrEqual(limit);
    items.push(...page);
    if (page.length < limit) return { items, pages };
    after = keyOf(page[page.length - 1]);
  }
}

describe.each(databases.eachSupportedId())('paged lists (%s)', databaseId => {
  it('walks clusters, applications and deployments page by page in key order, every row exactly once', async () => {
    const { stores } = await createTestStores(databases, databaseId);
    // Names and refs whose order depends on how '-', '.' and digits sort: a keyset compare that
    // disagreed with the ORDER BY would skip or repeat rows here.
    const clusterNames = ['a', 'a-1', 'a1', 'a-b', 'ab', 'b', 'z-9', 'z9'];
    for (const name of clusterNames) {
      await stores.clusters.insertCluster({
        name,
        endpoint: `https://${name}.example:6443`,
        kubeconfigRef: `vault:${name}`,
        source: name.startsWith('z') ? 'discovered' : 'manual',
      });
    }
    const refs = [
      'component:default/web',
      'component:default/web-2',
      'component:default/web.api',
      'component:default/web2',
      'component:team-a/web',
      'component:team/web',
      'component:default/api',
    ];
    for (const entityRef of refs) {
      const application = await stores.applications.insertApplication({
        entityRef,
        name: entityRef.split('/')[1],
        spec: {},
      });
      for (const cluster of ['a', 'a-1', 'ab']) {
        await stores.deployments.insertDeployment(
          { applicationId: application.id, cluster, status: 'DEPLOYED' },
          'test',
        );
      }
    }

    for (const limit of [1, 2, 3, 1000]) {
      const clusters = await walk(
        page => stores.clusters.listClusters({ page }),
        c => [c.name],
        limit,
      );
      expect(clusters.items.map(c => c.name)).toEqual(
        (await stores.clusters.listClusters()).map(c => c.name),
      );
      expect(new Set(clusters.items.map(c => c.name)).size).toBe(
        clusterNames.length,
      );

      const applications = await walk(
        page => stores.applications.listApplications({ page }),
        a => [a.entityRef],
        limit,
      );
      expect(applications.items.map(a => a.entityRef)).toEqual(
        (await stores.applications.listApplications()).map(a => a.entityRef),
      );
      expect(new Set(applications.items.map(a => a.id)).size).toBe(refs.length);

      const deployments = await walk(
        page => stores.deployments.listDeployments({ page }),
        d => [d.entityRef, d.cluster],
        limit,
      );
      expect(deployments.items.map(d => d.id)).toEqual(
        (await stores.deployments.listDeployments()).map(d => d.id),
      );
      expect(new Set(deployments.items.map(d => d.id)).size).toBe(
        refs.length * 3,
      );
    }

    // A page keeps to its filter: the deployments of one entity, and ONLINE clusters (none).
    const ofWeb = await walk(
      page =>
        stores.deployments.listDeployments({
          entityRef: 'component:default/web',
          page,
        }),
      d => [d.entityRef, d.cluster],
      2,
    );
    expect(ofWeb.items.map(d => d.cluster)).toEqual(['a', 'a-1', 'ab']);
    expect(
      await stores.clusters.listClusters({
        status: 'ONLINE',
        page: { limit: 5 },
      }),
    ).toEqual([]);
  });

  it('refuses a manual cluster beyond maxManual with a ConflictError, also when registrations race, and counts no discovered cluster', async () => {
    const { stores } = await createTestStores(databases, databaseId);
    await stores.clusters.upsertDiscoveredClusters([
      { name: 'found-1', endpoint: 'https://f1', kubeconfigRef: '/k/f1' },
      { name: 'found-2', endpoint: 'https://f2', kubeconfigRef: '/k/f2' },
    ]);
    const manual = (name: string) =>
      stores.clusters.insertCluster(
        {
          name,
          endpoint: `https://${name}.example`,
          kubeconfigRef: `vault:${name}`,
          source: 'manual',
        },
        { maxManual: 3 },
      );
    await manual('m-1');
    // Ten registrations at once for the two places left: exactly two get in.
    const raced = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => manual(`race-${i}`)),
    );
    expect(raced.filter(r => r.status === 'fulfilled')).toHaveLength(2);
    for (const refused of raced.filter(r => r.status === 'rejected')) {
      expect((refused as PromiseRejectedResult).reason).toMatchObject({
        name: 'ConflictError',
        message: expect.stringContaining('fleet.clusters.maxManual'),
      });
    }
    await expect(manual('one-more')).rejects.toMatchObject({
      name: 'ConflictError',
    });
    const all = await stores.clusters.listClusters();
    expect(all.filter(c => c.source === 'manual')).toHaveLength(3);
    expect(all.filter(c => c.source === 'discovered')).toHaveLength(2);
    // Nothing of a refused registration was written, its event neither.
    expect(
      await stores.events.listEvents({
        subjectKind: 'cluster',
        subject: 'one-more',
      }),
    ).toEqual([]);
    // Discovery is not capped: it registers what the operator's kubeconfigs name.
    await stores.clusters.upsertDiscoveredClusters([
      { name: 'found-3', endpoint: 'https://f3', kubeconfigRef: '/k/f3' },
    ]);
    expect(await stores.clusters.getCluster('found-3')).toBeDefined();
  });
});
