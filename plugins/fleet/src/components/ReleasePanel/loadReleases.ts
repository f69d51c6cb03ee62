import type {
  Deployment,
  PlacementRefusal,
  Release,
  StageStatus,
} from '@cnp/plugin-fleet-common';
import { apiErrorMessage, type FleetApi } from '../../api';

/**
 * The application's stages; a failure to read them hides neither the deployments nor the
 * releases: it is returned as `stagesError`.
 */
async function loadStages(
  api: FleetApi,
  applicationId: string,
): Promise<{ stages: StageStatus[]; stagesError?: string }> {
  try {
    return { stages: await api.listStages(applicationId) };
  } catch (e) {
    return { stages: [], stagesError: apiErrorMessage(e) };
  }
}

/**
 * The component's Fleet application, the clusters its placement was refused, its releases and
 * its stages. A failure to read them does not hide the deployments: it is returned as
 * `releasesError` (or `stagesError`).
 */
export async function loadReleases(
  api: FleetApi,
  entityRef: string,
  deployments: Deployment[],
): Promise<{
  applicationId?: string;
  placementRefused?: PlacementRefusal[];
  releases: Release[];
  releasesError?: string;
  /** The application's stages in order; empty when it names none. */
  stages: StageStatus[];
  stagesError?: string;
}> {
  let applicationId = deployments.find(d => d.applicationId)?.applicationId;
  try {
    const application = (await api.listApplications({ entityRef })).find(
      a => a.id === applicationId || (!applicationId && !a.removing),
    );
    applicationId ??= application?.id;
    if (!applicationId) return { releases: [], stages: [] };
    const [releases, stages] = await Promise.all([
      api.listReleases(applicationId),
      loadStages(api, applicationId),
    ]);
    return {
      applicationId,
      placementRefused: application?.placementRefused,
      releases,
      ...stages,
    };
  } catch (e) {
    return {
      applicationId,
      releases: [],
      releasesError: apiErrorMessage(e),
      stages: [],
    };
  }
}
