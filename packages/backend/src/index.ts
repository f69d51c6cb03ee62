/*
 * Hi!
 *
 * Note that this is an EXAMPLE Backstage backend. Please check the README.
 *
 * Happy hacking!
 */

import { createBackend } from '@backstage/backend-defaults';
import { gitHostPlugin, gitHostUrlReaderFactory } from '@cnp/git-host';
import { permissionModuleFleetPolicy } from './permissions/FleetPermissionPolicy';
import { scaffolderModulePublishLocal } from './scaffolder/publishLocal';

const backend = createBackend();

backend.add(import('@backstage/plugin-app-backend'));
backend.add(import('@backstage/plugin-proxy-backend'));

// scaffolder plugin
backend.add(import('@backstage/plugin-scaffolder-backend'));
backend.add(
  import('@backstage/plugin-scaffolder-backend-module-notifications'),
);

// techdocs plugin
backend.add(import('@backstage/plugin-techdocs-backend'));

// auth plugin
backend.add(import('@backstage/plugin-auth-backend'));
// See https://backstage.io/docs/backend-system/building-backends/migrating#the-auth-plugin
backend.add(import('@backstage/plugin-auth-backend-module-guest-provider'));
// See https://backstage.io/docs/auth/guest/provider
// Signs in the catalog user an oauth2-proxy in front names (X-Forwarded-User). It does nothing
// until auth.providers.oauth2Proxy is configured: scripts/start.sh does so for local runs only,
// so that a second person (user:default/carol) can approve the guest's releases.
// See https://backstage.io/docs/auth/oauth2-proxy/provider
backend.add(
  import('@backstage/plugin-auth-backend-module-oauth2-proxy-provider'),
);

// catalog plugin
backend.add(import('@backstage/plugin-catalog-backend'));
backend.add(
  import('@backstage/plugin-catalog-backend-module-scaffolder-entity-model'),
);

// See https://backstage.io/docs/features/software-catalog/configuration#subscribing-to-catalog-errors
backend.add(import('@backstage/plugin-catalog-backend-module-logs'));

// permission plugin
backend.add(import('@backstage/plugin-permission-backend'));
// This app's policy: Fleet's permissions, everything else allowed (docs/permissions.md).
// See https://backstage.io/docs/permissions/getting-started for how to write your own.
backend.add(permissionModuleFleetPolicy);

// search plugin
backend.add(import('@backstage/plugin-search-backend'));

// search collators
backend.add(import('@backstage/plugin-search-backend-module-catalog'));
backend.add(import('@backstage/plugin-search-backend-module-techdocs'));

// user settings plugin
backend.add(import('@backstage/plugin-user-settings-backend'));

// notifications and signals plugins
backend.add(import('@backstage/plugin-notifications-backend'));
backend.add(import('@backstage/plugin-signals-backend'));

// fleet: cluster discovery, health and deployments across Kubernetes clusters
backend.add(import('@cnp/plugin-fleet-backend'));
// clusters as catalog entities (Resource, type kubernetes-cluster) and Fleet's catalog rule
backend.add(import('@cnp/plugin-catalog-backend-module-fleet'));
// scaffolder actions fleet:application:register and fleet:deploy
backend.add(import('@cnp/plugin-scaffolder-backend-module-fleet'));
// publish:local: this offline portal's stand-in for publish:github + catalog:register
backend.add(scaffolderModulePublishLocal);

// kubernetes plugin (a component's pods, ReplicaSets, events and logs); its clusters are Fleet's,
// each with the credentials of its own kubeconfig
backend.add(import('@backstage/plugin-kubernetes-backend'));
backend.add(import('@cnp/plugin-kubernetes-backend-module-fleet'));

// the offline portal's Git host: serves fleet.gitHost.serve.root read-only at /api/githost, and
// its URL reader reads the repositories under fleet.gitHost.baseUrl (each does nothing unset)
backend.add(gitHostPlugin);
backend.add(gitHostUrlReaderFactory);

backend.start();
