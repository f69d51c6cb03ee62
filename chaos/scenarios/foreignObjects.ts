/*
 * Foreign objects: another team runs a Rollout `checkout`, a Deployment `checkout-canary` and a
 * VirtualService `storefront` in the namespace where a deployer registers `checkout`. A canary
 * release (Argo Rollout, Istio and plain clusters) and an undeploy through a running backend
 * must leave every one of them byte-identical (whole JSON, resourceVersion included), the
 * release ending OWNERSHIP_CONFLICT.
 */
import path from 'node:path';
import {
  AppsV1Api,
  CustomObjectsApi,
  KubeConfig,
} from '@kubernetes/client-node';
import { startSimulator } from '@cnp/fleet-harness';
import type { KubeSimulator } from '@cnp/kube-simulator';
import { CHAOS_READY_DELAY_MS, startFleetBackend, waitFor } from '../lib';
import type { Scenario } from '../lib';

const NAMESPACE = 'shop';
const ENTITY = 'component:default/checkout';
const CLUSTERS = {
  rollout: 'fo-rollout',
  istio: 'fo-istio',
  plain: 'fo-plain',
};

function clients(sim: KubeSimulator, cluster: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath(cluster));
  return {
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

const template = (app: string) => ({
  metadata: { labels: { app, team: 'storefront' } },
  spec: {
    containers: [{ name: 'app', image: 'registry.example/storefront:9.1' }],
  },
});

/** The other team's objects, as it created them. */
async function createForeign(sim: KubeSimulator, cluster: string) {
  const { apps, custom } = clients(sim, cluster);
  await apps.createNamespacedDeployment({
    namespace: NAMESPACE,
    body: {
      metadata: { name: 'checkout-canary', labels: { team: 'storefront' } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'storefront-canary' } },
        template: template('storefront-canary'),
      },
    },
  });
  if (cluster === CLUSTERS.rollout) {
    await custom.createNamespacedCustomObject({
      group: 'argoproj.io',
      version: 'v1alpha1',
      namespace: NAMESPACE,
      plural: 'rollouts',
      body: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Rollout',
        metadata: { name: 'checkout', labels: { team: 'storefront' } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'storefront' } },
          template: template('storefront'),
          strategy: { canary: { steps: [{ setWeight: 10 }] } },
        },
      },
    });
  }
  if (cluster === CLUSTERS.istio) {
    await custom.createNamespacedCustomObject({
      group: 'networking.istio.io',
      version: 'v1beta1',
      namespace: NAMESPACE,
      plural: 'virtualservices',
      body: {
        apiVersion: 'networking.istio.io/v1beta1',
        kind: 'VirtualService',
        metadata: { name: 'storefront', labels: { team: 'storefront' } },
        spec: {
          hosts: ['shop.example.com'],
          http: [
            {
              name: 'storefront',
              route: [{ destination: { host: 'storefront' } }],
            },
            {
              name: 'login',
              match: [{ uri: { prefix: '/login' } }],
              route: [{ destination: { host: 'login' } }],
            },
          ],
        },
      },
    });
  }
}

/** The other team's objects' whole JSON (not the pods their controllers make). */
function snapshot(sim: KubeSimulator, cluster: string): string {
  return JSON.stringify(
    sim
      .objects(cluster)
      .filter(
        o =>
          ['Deployment', 'Rollout', 'VirtualService'].includes(o.kind) &&
          (o.metadata as any).namespace === NAMESPACE &&
          (o.metadata as any).labels?.team === 'storefront',
      )
      .sort((a, b) =>
        `${a.kind}/${(a.metadata as any).name}`.localeCompare(
          `${b.kind}/${(b.metadata as any).name}`,
        ),
      ),
  );
}

/** The snapshot once the simulator's controllers stopped writing the objects' status. */
async function settled(sim: KubeSimulator, cluster: string): Promise<string> {
  let last = snapshot(sim, cluster);
  for (let i = 0; i < 100; i++) {
    await new Promise(r => setTimeout(r, 250));
    const now = snapshot(sim, cluster);
    if (now === last) return now;
    last = now;
  }
  throw new Error(`${cluster}: the foreign objects never settled`);
}

export const foreignObjects: Scenario = {
  id: 'foreign-objects',
  title: "Another team's objects in the way",
  tried: `another team's Rollout 'checkout', Deployment 'checkout-canary' and VirtualService 'storefront' (routes storefront and /login) in namespace '${NAMESPACE}' where ${ENTITY} is deployed; a canary release with Istio traffic routing over an Argo Rollouts cluster, an Istio cluster and a plain one; then an undeploy`,
  timeoutMs: 240_000,
  async run({ checks, db, tmp, log }) {
    const sim = await startSimulator({
      readyDelayMs: CHAOS_READY_DELAY_MS,
      clusters: Object.values(CLUSTERS),
    });
    for (const cluster of Object.values(CLUSTERS)) {
      sim.setCrd(cluster, 'rollouts.argoproj.io', cluster === CLUSTERS.rollout);
      sim.setCrd(
        cluster,
        'virtualservices.networking.istio.io',
        cluster === CLUSTERS.istio,
      );
    }
    const fleet = await startFleetBackend({
      db,
      kubeconfigDir: sim.kubeconfigDir,
      fleet: { deploy: { namespace: NAMESPACE, defaultReplicas: 2 } },
      logFile: path.join(tmp, 'backend.log'),
    });
    const { call } = fleet;
    await call('POST', '/health/run');

    const deployments: Record<string, string> = {};
    for (const cluster of Object.values(CLUSTERS)) {
      const answer = await call('POST', '/deployments', {
        entityRef: ENTITY,
        cluster,
        image: 'registry.example/checkout:1.0.0',
      });
      checks.ok(
        answer.status === 201,
        `the deployer's deploy to ${cluster} is accepted`,
        answer.text.slice(0, 200),
      );
      deployments[cluster] = answer.json?.id;
    }
    for (const [cluster, id] of Object.entries(deployments)) {
      await waitFor(
        `${cluster} DEPLOYED`,
        async () =>
          (await call('GET', `/deployments/${id}`)).json?.status === 'DEPLOYED'
            ? true
            : undefined,
        60_000,
      );
    }
    const applicationId = (
      await call('GET', `/deployments/${deployments[CLUSTERS.plain]}`)
    ).json?.applicationId;

    const before: Record<string, string> = {};
    for (const cluster of Object.values(CLUSTERS)) {
      await createForeign(sim, cluster);
      before[cluster] = await settled(sim, cluster);
    }
    log(
      `foreign objects: ${Object.entries(before)
        .map(([c, s]) => `${c} ${JSON.parse(s).length}`)
        .join(', ')}`,
    );

    const started = await call(
      'POST',
      `/applications/${applicationId}/releases`,
      {
        image: 'registry.example/checkout:2.0.0',
        strategy: {
          waves: [{ clusters: [CLUSTERS.plain] }, { percent: 100 }],
          canary: {
            steps: [{ setWeight: 50 }, { pause: {} }, { setWeight: 100 }],
            trafficRouting: {
              istio: {
                virtualService: {
                  name: 'storefront',
                  routes: ['storefront', 'login'],
                },
              },
            },
          },
          rollback: { enabled: true, timeout: '30s' },
        },
      },
    );
    checks.ok(
      started.status === 201,
      'the canary release is accepted (the ownership check runs before its first step)',
      started.text.slice(0, 300),
    );
    const releaseId = started.json?.id;
    const release = await waitFor(
      'the release to end',
      async () => {
        const r = (await call('GET', `/releases/${releaseId}`)).json;
        return r && ['ROLLED_BACK', 'COMPLETED'].includes(r.status)
          ? r
          : undefined;
      },
      90_000,
    );
    log(
      `release: ${release.status}, ${release.progress?.abort?.message ?? ''}`,
    );
    checks.ok(
      release.status === 'ROLLED_BACK' &&
        release.progress?.abort?.reason === 'OWNERSHIP_CONFLICT',
      'the release ends ROLLED_BACK with OWNERSHIP_CONFLICT',
      JSON.stringify(release.progress?.abort),
    );
    checks.ok(
      (release.progress?.clusters ?? []).every(
        (c: any) => c.state === 'SKIPPED',
      ),
      'refused before any step: no cluster of any wave was touched',
      JSON.stringify(release.progress?.clusters?.map((c: any) => c.state)),
    );
    for (const cluster of Object.values(CLUSTERS)) {
      checks.ok(
        snapshot(sim, cluster) === before[cluster],
        `${cluster}: the other team's objects are byte-identical after the release`,
      );
    }

    for (const [cluster, id] of Object.entries(deployments)) {
      const answer = await call('DELETE', `/deployments/${id}`);
      checks.ok(
        answer.status === 202,
        `undeploy from ${cluster} is accepted`,
        answer.text.slice(0, 200),
      );
    }
    for (const [cluster, id] of Object.entries(deployments)) {
      await waitFor(
        `${cluster} undeployed`,
        async () =>
          (await call('GET', `/deployments/${id}`)).status === 404
            ? true
            : undefined,
        60_000,
      );
      checks.ok(
        snapshot(sim, cluster) === before[cluster],
        `${cluster}: the other team's objects are byte-identical after the undeploy`,
      );
    }
    checks.ok(
      !fleet.answers.some(a => a.status >= 500),
      'no answer was a 5xx',
      fleet.answers
        .filter(a => a.status >= 500)
        .map(a => `${a.method} ${a.path} ${a.status}`)
        .join('; '),
    );
  },
};
