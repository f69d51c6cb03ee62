import {
  NAME_LABEL,
  serviceNameFor,
  TRACK_LABEL,
  type Manifests,
} from '../../deploy/manifests';
import {
  analysisTemplateName,
  canaryServiceName,
  REVISION_ANNOTATION,
  rolloutAnalysisTemplates,
  ROLLOUTS,
  WORKLOAD_LABEL,
  type CanaryTarget,
} from './canaryObjects';

/*
 * The Argo Rollout Fleet writes for a release: its steps, its pod template, and its Istio
 * routing where the cluster serves VirtualServices.
 */

/** The Rollout's steps: each weight, then an untimed pause Fleet promotes past; 100 ends it. */
export function rolloutSteps(weights: number[]): object[] {
  return weights.flatMap(weight =>
    weight >= 100
      ? [{ setWeight: 100 }]
      : [{ setWeight: weight }, { pause: {} }],
  );
}

/** The step index a Rollout pauses at once weight `index` of the strategy is reached. */
export function rolloutPauseIndex(index: number): number {
  return index * 2 + 1;
}

/** A Rollout's pod template: the revision's, its pods told apart from the Deployment's. */
export function rolloutTemplate(
  manifests: Pick<Manifests, 'deployment'>,
  revision: number,
) {
  const template = structuredClone(manifests.deployment.spec!.template);
  // A Rollout's pods are told apart by their ReplicaSet's hash, not by Fleet's track.
  const { [TRACK_LABEL]: _track, ...labels } = template.metadata?.labels ?? {};
  template.metadata = {
    ...template.metadata,
    labels: { ...labels, [WORKLOAD_LABEL]: 'rollout' },
    annotations: {
      ...template.metadata?.annotations,
      [REVISION_ANNOTATION]: String(revision),
    },
  };
  return template;
}

/**
 * Istio traffic routing for the Rollout, where the strategy names a VirtualService and the
 * cluster serves them: Argo Rollouts then sets the route weights itself, between the
 * application's Service (stable) and the canary's, each narrowed to its pods by Argo.
 */
function istioRouting(target: CanaryTarget, mesh: boolean) {
  if (!mesh || !target.istio) return {};
  return {
    canaryService: canaryServiceName(target),
    stableService: serviceNameFor(target.name),
    trafficRouting: {
      istio: {
        virtualService: {
          name: target.istio.virtualService,
          ...(target.istio.routes?.length
            ? { routes: target.istio.routes }
            : {}),
        },
      },
    },
  };
}

export function rolloutManifest(target: CanaryTarget, mesh: boolean): object {
  const metadata = target.stable.deployment.metadata!;
  const templates = rolloutAnalysisTemplates(target);
  const analysis = templates.length
    ? {
        templates: templates.map(t => ({
          templateName: analysisTemplateName(target, t),
        })),
      }
    : undefined;
  return {
    apiVersion: `${ROLLOUTS.group}/${ROLLOUTS.version}`,
    kind: 'Rollout',
    metadata: {
      name: target.name,
      namespace: target.namespace,
      labels: metadata.labels,
      annotations: metadata.annotations,
    },
    spec: {
      replicas: target.replicas,
      selector: {
        matchLabels: { [NAME_LABEL]: target.name, [WORKLOAD_LABEL]: 'rollout' },
      },
      template: rolloutTemplate(target.stable, target.stableRevision),
      strategy: {
        canary: {
          steps: rolloutSteps(target.weights),
          maxSurge: target.maxSurge,
          maxUnavailable: target.maxUnavailable,
          ...istioRouting(target, mesh),
          ...(analysis ? { analysis } : {}),
        },
      },
    },
  };
}
