import { urlReaderFactoriesServiceRef } from '@backstage/backend-defaults/urlReader';
import { createServiceFactory } from '@backstage/backend-plugin-api';
import { createGitHostReaderFactory } from './GitHostUrlReader';

/**
 * Adds the Git host reader to the backend's `UrlReaderService`
 * (`backend.add(gitHostUrlReaderFactory)`). It reads its base URL from
 * `fleet.gitHost.baseUrl` and adds no reader when that key is absent.
 */
export const gitHostUrlReaderFactory = createServiceFactory({
  service: urlReaderFactoriesServiceRef,
  deps: {},
  async factory() {
    return createGitHostReaderFactory();
  },
});
