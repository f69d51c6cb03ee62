import type { KubernetesObject } from '@kubernetes/client-node';
import type { FleetManifestSource } from '@cnp/plugin-fleet-node';
import type { DeploySettings } from './deploymentTypes';
import { buildManifests, type Manifests } from './manifests';

/** The id of Fleet's own manifest source. */
export const GENERATED_WORKLOAD_SOURCE_ID = 'generated';

/** The objects of a workload, in the order Fleet applies them. */
export function objectsOf(manifests: Manifests): KubernetesObject[] {
  return [
    manifests.deployment,
    manifests.service,
    ...(manifests.podDisruptionBudget ? [manifests.podDisruptionBudget] : []),
    ...(manifests.ingress ? [manifests.ingress] : []),
  ];
}

/**
 * Fleet's built-in manifest source, for every application no added source applies to: the
 * workload `buildManifests` generates from the application's spec and the revision (a
 * Deployment, a Service, a PodDisruptionBudget from two replicas, an Ingress when asked), with
 * the `fleet.deploy` defaults.
 */
export function generatedWorkloadSource(
  deploy: Pick<
    DeploySettings,
    | 'defaultReplicas'
    | 'defaultResources'
    | 'preStopSleepSeconds'
    | 'progressDeadlineMs'
  >,
): FleetManifestSource {
  return {
    id: GENERATED_WORKLOAD_SOURCE_ID,
    appliesTo: () => true,
    render: async ({ application, spec, namespace, cluster }) =>
      objectsOf(
        buildManifests({
          name: application.name,
          entityRef: application.entityRef,
          namespace,
          spec,
          defaultReplicas: deploy.defaultReplicas,
          defaultResources: deploy.defaultResources,
          preStopSleepSeconds: deploy.preStopSleepSeconds,
          serverVersion: cluster.serverVersion,
          progressDeadlineSeconds: Math.max(
            1,
            Math.ceil(deploy.progressDeadlineMs / 1000),
          ),
        }),
      ),
  };
}
