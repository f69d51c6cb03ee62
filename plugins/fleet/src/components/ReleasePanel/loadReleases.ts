import type {
  Deployment,
  PlacementRefusal,
  Release,
} from '@cnp/plugin-fleet-common';
import { apiErrorMessage, type FleetApi } from '../../api';

/**
 * The component's Fleet application, the clusters its placement was refused, and its releases.
 * A failure to read them does not hide the deployments: it is returned as `releasesError`.
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
}> {
  let applicationId = deployments.find(d => d.applicationId)?.applicationId;
  try {
    const application = (await api.listApplications({ entityRef })).find(
      a => a.id === applicationId || (!applicationId && !a.removing),
    );
    applicationId ??= application?.id;
    if (!applicationId) return { releases: [] };
    return {
      applicationId,
      placementRefused: application?.placementRefused,
      releases: await api.listReleases(applicationId),
    };
  } catch (e) {
    return { applicationId, releases: [], releasesError: apiErrorMessage(e) };
  }
}
