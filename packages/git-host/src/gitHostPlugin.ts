import {
  coreServices,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createGitRequestHandler } from './gitRequestHandler';

/** The config key of the folder of bare repositories the plugin serves. */
export const GIT_HOST_SERVE_ROOT_CONFIG_KEY = 'fleet.gitHost.serve.root';

/**
 * A backend plugin that serves the bare repositories under
 * `fleet.gitHost.serve.root` read-only over Git's smart HTTP protocol at
 * `/api/githost/<name>.git`, to anyone (no Backstage token: Git clients send
 * none). Without the key it registers nothing; a key naming no folder stops
 * the backend with an error that says so.
 */
export const gitHostPlugin = createBackendPlugin({
  pluginId: 'githost',
  register(env) {
    env.registerInit({
      deps: {
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        httpRouter: coreServices.httpRouter,
      },
      async init({ config, logger, httpRouter }) {
        const configured = config.getOptionalString(
          GIT_HOST_SERVE_ROOT_CONFIG_KEY,
        );
        if (!configured) return;
        const root = path.resolve(configured);
        const stat = await fs.stat(root).catch(() => undefined);
        if (!stat?.isDirectory()) {
          throw new Error(
            `${GIT_HOST_SERVE_ROOT_CONFIG_KEY} must name a folder of bare Git repositories; ${root} is none`,
          );
        }
        httpRouter.use(await createGitRequestHandler({ root }));
        httpRouter.addAuthPolicy({ path: '/', allow: 'unauthenticated' });
        logger.info(`Serving the Git repositories under ${root}, read-only`);
      },
    });
  },
});
