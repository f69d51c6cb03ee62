import type { Deployment, Release } from '@cnp/plugin-fleet-common';
import { apiErrorMessage, type FleetApi } from '../../api';

/**
 * The component's Fleet application (from its deployments, else looked up) and its releases. A
 * failure to read the releases does not hide the deployments: it is returned as `releasesError`.
 */
export async function loadReleases(
  api: FleetApi,
  entityRef: string,
  deployments: Deployment[],
): Promise<{
  applicationId?: string;
  releases: Release[];
  releasesError?: string;
}> {
  let applicationId = deployments.find(d => d.applicationId)?.applicationId;
  try {
    if (!applicationId) {
      const applications = await api.listApplications({ entityRef });
      applicationId = applications.find(a => !a.removing)?.id;
    }
    if (!applicationId) return { releases: [] };
    return { applicationId, releases: await api.listReleases(applicationId) };
  } catch (e) {
    return { applicationId, releases: [], releasesError: apiErrorMessage(e) };
  }
}
