import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { useSimulator } from '@cnp/kube-simulator';

/**
 * The cluster the conformance suite runs against: the one `FLEET_CONFORMANCE_KUBECONFIG` names
 * (a real kind or k3s cluster), or else a kube simulator started for the test file. Fleet
 * discovers it from `kubeconfigDir`, as it discovers any cluster; the tests read and change the
 * live objects through `kubeConfig`, as another tool on the cluster would.
 */
export interface ConformanceCluster {
  /** Fleet's name for the cluster: the kubeconfig's current context. */
  name: string;
  /** A folder holding only this cluster's kubeconfig, for `fleet.discovery.kubeconfigDir`. */
  kubeconfigDir: string;
  /** The same kubeconfig, for the tests' own reads and writes. */
  kubeConfig: KubeConfig;
  /** Where Fleet deploys (`fleet.deploy.namespace`). */
  namespace: string;
  /** Two images that both answer `GET /health` on port 8000: the deploy's and the release's. */
  images: [string, string];
  /** True against the simulator, false against a real cluster. */
  simulated: boolean;
}

/** The environment variables the suite reads; a bad value stops it naming the variable. */
export const CONFORMANCE_ENV = {
  kubeconfig: 'FLEET_CONFORMANCE_KUBECONFIG',
  namespace: 'FLEET_CONFORMANCE_NAMESPACE',
  images: 'FLEET_CONFORMANCE_IMAGES',
} as const;

function realCluster(file: string): ConformanceCluster {
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromFile(file);
  } catch (error) {
    throw new Error(
      `${CONFORMANCE_ENV.kubeconfig}=${file} is not a readable kubeconfig: ${error}`,
    );
  }
  const name = kubeConfig.getCurrentContext();
  if (!name || !kubeConfig.getCurrentCluster()) {
    throw new Error(
      `${CONFORMANCE_ENV.kubeconfig}=${file} has no current context naming a cluster`,
    );
  }
  const images = (process.env[CONFORMANCE_ENV.images] ?? '')
    .split(',')
    .map(image => image.trim())
    .filter(Boolean);
  if (images.length !== 2) {
    throw new Error(
      `${
        CONFORMANCE_ENV.images
      } must name two images, comma-separated, that answer GET /health on port 8000 (got '${
        process.env[CONFORMANCE_ENV.images] ?? ''
      }')`,
    );
  }
  // Fleet discovers every kubeconfig of its folder: this one only, under the context's name.
  const kubeconfigDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-conf-'));
  fs.writeFileSync(
    path.join(kubeconfigDir, `${name}.yaml`),
    fs.readFileSync(file),
    { mode: 0o600 },
  );
  afterAll(() => fs.rmSync(kubeconfigDir, { recursive: true, force: true }));
  return {
    name,
    kubeconfigDir,
    kubeConfig,
    namespace: process.env[CONFORMANCE_ENV.namespace] || 'default',
    images: [images[0], images[1]],
    simulated: false,
  };
}

/**
 * The conformance cluster of a test file, as jest hooks of its top level (call it at the top
 * level, as `useSimulator`). Its fields are read inside tests and hooks.
 */
export function useConformanceCluster(): ConformanceCluster {
  const file = process.env[CONFORMANCE_ENV.kubeconfig];
  if (file) return realCluster(file);
  const name = 'conformance';
  // No CRDs: the simulator runs the pods of Deployments only (not of Argo Rollouts), and the
  // canary test reads pods, so the simulated cluster takes Fleet's replicas traffic mode.
  const sim = useSimulator({
    clusters: [name],
    readyDelayMs: 100,
    crds: { [name]: [] },
  });
  let kubeConfig: KubeConfig | undefined;
  return {
    name,
    get kubeconfigDir() {
      return sim.kubeconfigDir;
    },
    get kubeConfig() {
      if (!kubeConfig) {
        kubeConfig = new KubeConfig();
        kubeConfig.loadFromFile(sim.kubeconfigPath(name));
      }
      return kubeConfig;
    },
    namespace: 'default',
    images: ['conformance:1.0.0', 'conformance:2.0.0'],
    simulated: true,
  };
}
