/*
 * Stages through the whole backend and the simulator: staging (a named cluster) and prod (its
 * clusters by label), prod requiring the version staging verified. A release to prod is refused
 * before staging verified it and until the soak is over, then takes staging's version; an
 * automatic rollback in staging takes the verification back.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { useSimulator } from '@cnp/kube-simulator';
import request from 'supertest';
import { startFleetTestBackend } from './testBackend';
import { createTestDatabases } from './testing/databases';
import { deployedApplication, waitUntil } from './testing/apiCalls';

jest.setTimeout(120_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['stg-a', 'prd-a'],
  readyDelayMs: 100,
});

const V1 = 'ghcr.io/acme/payments:1.4.0';
const V2 = 'ghcr.io/acme/payments:1.5.0';
const V3 = 'ghcr.io/acme/payments:1.6.0';

describe.each(databases.eachSupportedId())('stages (%s)', databaseId => {
  const name = `payments-${databaseId.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
  const entityRef = `component:default/${name}`;

  async function start() {
    const { server } = await startFleetTestBackend({
      knex: await databases.init(databaseId),
      kubeconfigDir: sim.kubeconfigDir,
      fleet: {
        deploy: {
          namespace: name,
          pollInterval: { milliseconds: 100 },
          progressDeadline: { seconds: 2 },
        },
        reconcile: { watch: false },
      },
      features: [
        mockServices.scheduler.factory(),
        catalogServiceMock.factory({
          entities: [
            {
              apiVersion: 'backstage.io/v1alpha1',
              kind: 'Component',
              metadata: { name, namespace: 'default' },
              spec: {
                type: 'service',
                lifecycle: 'production',
                owner: 'team-a',
              },
            },
          ],
        }),
      ],
    });
    return server;
  }

  const stagesWith = (soak: string) => ({
    spec: {
      stages: [
        { name: 'staging', clusters: ['stg-a'] },
        {
          name: 'prod',
          clusterSelector: 'env=prod',
          requires: { stage: 'staging', soak },
        },
      ],
    },
  });

  it('promotes to prod only what staging verified and soaked, until an automatic rollback', async () => {
    const server = await start();
    const { id } = await deployedApplication(server, {
      entityRef,
      image: V1,
      clusters: ['stg-a', 'prd-a'],
    });
    await request(server)
      .patch('/api/fleet/clusters/prd-a')
      .send({ labels: { env: 'prod' } })
      .expect(200);

    // A stage that requires a later one is refused, naming the field.
    const refused = await request(server)
      .patch(`/api/fleet/applications/${id}`)
      .send({
        spec: {
          stages: [
            {
              name: 'prod',
              clusters: ['prd-a'],
              requires: { stage: 'staging' },
            },
            { name: 'staging', clusters: ['stg-a'] },
          ],
        },
      })
      .expect(400);
    expect(refused.body.error.message).toContain(
      "spec.stages.0.requires.stage: must name an earlier stage ('staging' is not before 'prod')",
    );
    await request(server)
      .patch(`/api/fleet/applications/${id}`)
      .send(stagesWith('1d'))
      .expect(200);

    const stages = async () =>
      (
        await request(server)
          .get(`/api/fleet/applications/${id}/stages`)
          .expect(200)
      ).body.items;
    // V1 came by a deploy, not a release: staging verified nothing.
    expect(await stages()).toEqual([
      {
        name: 'staging',
        clusters: ['stg-a'],
        version: V1,
        verified: null,
        requires: null,
        missing: [],
      },
      {
        name: 'prod',
        clusters: ['prd-a'],
        version: V1,
        verified: null,
        requires: 'staging',
        missing: [`staging runs ${V1} but no release brought it there`],
      },
    ]);

    const release = (body: object) =>
      request(server).post(`/api/fleet/applications/${id}/releases`).send(body);

    // Before staging verified anything: 409 naming staging.
    const early = await release({ stage: 'prod', image: V2 }).expect(409);
    expect(early.body.error.message).toBe(
      `stage prod requires a version staging verified: staging runs ${V1} but no release brought it there`,
    );
    // A cluster outside the stage, or a stage the application does not name: 400.
    await release({ stage: 'prod', clusters: ['stg-a'] }).expect(400);
    await release({ stage: 'qa' }).expect(400);

    // Staging takes V2 (it requires nothing), on its clusters only.
    const toStaging = await release({ stage: 'staging', image: V2 }).expect(
      201,
    );
    expect(
      toStaging.body.targets.map((t: { cluster: string }) => t.cluster),
    ).toEqual(['stg-a']);
    await waitUntil(
      async () =>
        (
          await request(server).get(`/api/fleet/releases/${toStaging.body.id}`)
        ).body.status,
      status => status === 'COMPLETED',
    );
    const verified = (await stages())[0];
    expect(verified).toMatchObject({
      name: 'staging',
      version: V2,
      verified: { version: V2 },
    });
    const since = Date.parse(verified.verified.since);
    expect(Date.parse(verified.verified.soakedUntil) - since).toBe(86_400_000);

    // Verified, but not soaked for a day.
    const unsoaked = await release({ stage: 'prod' }).expect(409);
    expect(unsoaked.body.error.message).toBe(
      `stage prod requires a version staging verified: staging runs ${V2} since ${verified.verified.since}: soaked until ${verified.verified.soakedUntil}`,
    );
    expect((await stages())[1].missing).toEqual([
      `staging runs ${V2} since ${verified.verified.since}: soaked until ${verified.verified.soakedUntil}`,
    ]);

    // No soak: prod takes V2, not another version; without an image, V2 is released.
    await request(server)
      .patch(`/api/fleet/applications/${id}`)
      .send(stagesWith('0s'))
      .expect(200);
    const other = await release({ stage: 'prod', image: V3 }).expect(409);
    expect(other.body.error.message).toBe(
      `stage prod requires a version staging verified: staging verified ${V2}, not ${V3}`,
    );
    const toProd = await release({ stage: 'prod' }).expect(201);
    expect(toProd.body).toMatchObject({
      image: V2,
      targets: [expect.objectContaining({ cluster: 'prd-a' })],
    });
    await waitUntil(
      async () =>
        (
          await request(server).get(`/api/fleet/releases/${toProd.body.id}`)
        ).body.status,
      status => status === 'COMPLETED',
    );
    expect(await stages()).toMatchObject([
      { name: 'staging', version: V2, verified: { version: V2 }, missing: [] },
      {
        name: 'prod',
        clusters: ['prd-a'],
        version: V2,
        verified: { version: V2 },
        missing: [],
      },
    ]);

    // V3 fails in staging and is rolled back to V2 automatically: staging verifies nothing.
    try {
      sim.setReadiness('stg-a', { neverReady: true });
      const bad = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'stg-a', image: V3 })
        .expect(201);
      await waitUntil(
        async () =>
          (
            await request(server).get(`/api/fleet/deployments/${bad.body.id}`)
          ).body,
        (d: { revision: number }) => d.revision === bad.body.revision + 1,
      );
    } finally {
      sim.setReadiness('stg-a', { neverReady: false, readyDelayMs: 100 });
    }
    await waitUntil(
      async () =>
        (
          await request(server).get(
            `/api/fleet/deployments?entityRef=${entityRef}&cluster=stg-a`,
          )
        ).body.items[0],
      (d: { status: string; image: string }) =>
        d.status === 'DEPLOYED' && d.image === V2,
    );
    const [staging, prod] = await stages();
    expect(staging).toMatchObject({ version: V2, verified: null });
    expect(prod.missing).toEqual([
      expect.stringMatching(
        /^staging: stg-a was rolled back automatically \(revision \d+\): a new release must complete$/,
      ),
    ]);
    await release({ stage: 'prod', image: V2 }).expect(409);
  });
});
