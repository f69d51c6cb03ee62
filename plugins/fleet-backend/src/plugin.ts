import {
  coreServices,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
import {
  fleetClusterDeployPermission,
  fleetPermissions,
} from '@cnp/plugin-fleet-common';
import {
  fleetClockServiceRef,
  fleetClusterPermissionResourceRef,
  fleetClusterPermissionRules,
  fleetAnalysisProvidersExtensionPoint,
  fleetTrafficProvidersExtensionPoint,
  type FleetAnalysisProvider,
  type FleetTrafficProvider,
} from '@cnp/plugin-fleet-node';
import { metricsServiceRef } from '@backstage/backend-plugin-api/alpha';
import { catalogServiceRef } from '@backstage/plugin-catalog-node';
import { notificationService } from '@backstage/plugin-notifications-node';
import { signalsServiceRef } from '@backstage/plugin-signals-node';
import { createEntityAnnotationReader } from './catalog/entityAnnotations';
import { createEntityOwnerReader } from './catalog/entityOwners';
import { createDeciderReader } from './catalog/userGroups';
import { createReleaseGateNotices } from './events/ReleaseGateNotifier';
import { ProjectGuard } from './tenancy/ProjectGuard';
import { createTenancyChecks } from './service/tenancyChecks';
import { readFleetConfig } from './config/FleetConfig';
import { DatabaseFleetStores } from './database/DatabaseFleetStores';
import { ClusterDiscovery } from './discovery/ClusterDiscovery';
import { hubKubeconfigItems } from './discovery/hubKubeconfigItems';
import { DeploymentService } from './deploy/DeploymentService';
import { ManifestApplier } from './deploy/ManifestApplier';
import { ManifestRemover } from './deploy/ManifestRemover';
import {
  AnalysisProviders,
  createPrometheusAnalysisProvider,
} from './progressive/AnalysisProviders';
import { queryRange } from './progressive/judge/rangeQuery';
import {
  builtInTrafficProviders,
  TrafficProviders,
} from './progressive/traffic/TrafficProviders';
import {
  RELEASE_TASK_ID,
  ReleaseOrchestrator,
} from './progressive/ReleaseOrchestrator';
import { ReleaseService } from './progressive/ReleaseService';
import {
  EVENT_RETENTION_TASK_ID,
  EventRetention,
} from './events/EventRetention';
import { FleetListeners } from './events/FleetListener';
import { FleetNotifier } from './events/FleetNotifier';
import { FleetSignals } from './events/FleetSignals';
import { HealthWorker } from './health/HealthWorker';
import { FleetMetrics } from './metrics/FleetMetrics';
import { ClusterClients } from './kubernetes/ClusterClients';
import { HubCluster } from './kubernetes/HubCluster';
import {
  fleetManifestSourcesExtensionPoint,
  KubeconfigAccessPolicy,
  type FleetManifestSource,
} from '@cnp/plugin-fleet-node';
import { ReconcileWorker } from './reconcile/ReconcileWorker';
import { ClusterWatches } from './livestate/ClusterWatches';
import { DriftChecks } from './livestate/DriftChecks';
import { createPlacementGate } from './reconcile/placementGate';
import { createRouter } from './service/router';
import { FreezeWindows } from './stages/freezeWindows';
import { ObjectSetApplier } from './deploy/ObjectSetApplier';
import { ManifestReader } from './repository/ManifestReader';
import { asError } from './util/errors';

/**
 * Fleet backend plugin: cluster discovery, the health worker and the Fleet API.
 *
 * @public
 */
export const fleetPlugin = createBackendPlugin({
  pluginId: 'fleet',
  register(env) {
    // The manifest sources modules add, in order; Fleet's generated workload comes after them.
    const manifestSources: FleetManifestSource[] = [];
    env.registerExtensionPoint(fleetManifestSourcesExtensionPoint, {
      addManifestSource(...sources) {
        manifestSources.push(...sources);
      },
    });
    // Traffic providers backend modules add are asked before Fleet's own.
    const addedTrafficProviders: FleetTrafficProvider[] = [];
    env.registerExtensionPoint(fleetTrafficProvidersExtensionPoint, {
      addTrafficProvider(...providers) {
        addedTrafficProviders.push(...providers);
      },
    });
    // Analysis providers backend modules add measure the templates whose provider is their type.
    const addedAnalysisProviders: FleetAnalysisProvider[] = [];
    env.registerExtensionPoint(fleetAnalysisProvidersExtensionPoint, {
      addAnalysisProvider(...providers) {
        addedAnalysisProviders.push(...providers);
      },
    });
    env.registerInit({
      deps: {
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        auditor: coreServices.auditor,
        database: coreServices.database,
        scheduler: coreServices.scheduler,
        lifecycle: coreServices.lifecycle,
        httpRouter: coreServices.httpRouter,
        httpAuth: coreServices.httpAuth,
        permissions: coreServices.permissions,
        permissionsRegistry: coreServices.permissionsRegistry,
        auth: coreServices.auth,
        userInfo: coreServices.userInfo,
        urlReader: coreServices.urlReader,
        catalog: catalogServiceRef,
        signals: signalsServiceRef,
        notifications: notificationService,
        metrics: metricsServiceRef,
        clock: fleetClockServiceRef,
      },
      async init({
        config,
        logger,
        auditor,
        database,
        scheduler,
        lifecycle,
        httpRouter,
        httpAuth,
        permissions,
        permissionsRegistry,
        auth,
        userInfo,
        urlReader,
        catalog,
        signals,
        notifications,
        metrics,
        clock,
      }) {
        const fleetConfig = readFleetConfig(config);
        permissionsRegistry.addPermissions(fleetPermissions);

        // What Fleet commits, heard once, on the replica that committed it: signals for the UI,
        // notifications for people, metrics for monitoring.
        const listeners = FleetListeners.create({
          logger: logger.child({ task: 'fleet-listeners' }),
        });
        const stores = await DatabaseFleetStores.create({
          database,
          preparedStatements: fleetConfig.database.preparedStatements,
          onEventsCommitted: events => listeners.eventsCommitted(events),
        });
        if (fleetConfig.signals.enabled) {
          listeners.add(FleetSignals.create({ signals }));
        }
        if (fleetConfig.notifications.enabled) {
          listeners.add(
            FleetNotifier.create({
              notifications,
              logger: logger.child({ task: 'fleet-notifications' }),
              clusterAdmins: fleetConfig.notifications.clusterAdmins,
              clusterNamespace: fleetConfig.notifications.clusterNamespace,
            }),
          );
        }
        const fleetMetrics = FleetMetrics.create({ metrics, stores, logger });
        listeners.add(fleetMetrics);
        // Clusters are a permission resource: a policy's conditions on fleet.cluster.deploy
        // (their labels) are evaluated here, on the clusters loaded by name.
        permissionsRegistry.addResourceType({
          resourceRef: fleetClusterPermissionResourceRef,
          permissions: [fleetClusterDeployPermission],
          rules: Object.values(fleetClusterPermissionRules),
          getResources: names =>
            Promise.all(names.map(name => stores.clusters.getCluster(name))),
        });
        const policy = KubeconfigAccessPolicy.create(fleetConfig.discovery);
        const hub = HubCluster.create(fleetConfig.hub);
        if (hub) logger.info(`Fleet's hub cluster is ${hub.describe()}`);
        const clients = ClusterClients.create({
          policy,
          allowExecForManual: fleetConfig.discovery.allowExecForManual,
          hub,
          secretRules: {
            selector: fleetConfig.discovery.secretSelector,
            namespace: fleetConfig.discovery.secretNamespace,
          },
        });
        const discovery = ClusterDiscovery.create({
          clusters: stores.clusters,
          logger,
          sources: fleetConfig.discovery,
          extra:
            (hub?.inCluster && fleetConfig.hub.registerInCluster) ||
            fleetConfig.discovery.secretSelector
              ? () =>
                  hubKubeconfigItems({
                    hub,
                    inClusterName: fleetConfig.hub.registerInCluster
                      ? fleetConfig.hub.inClusterName
                      : undefined,
                    secretSelector: fleetConfig.discovery.secretSelector,
                    secretNamespace: fleetConfig.discovery.secretNamespace,
                  })
              : undefined,
        });
        try {
          await discovery.run();
        } catch (error) {
          // The health cycle runs discovery again; a bad source must not keep the backend down.
          logger.warn('Cluster discovery at startup failed', asError(error));
        }

        const health = HealthWorker.create({
          stores,
          clients,
          logger: logger.child({ task: 'fleet-health' }),
          scheduler,
          health: fleetConfig.health,
          discover: async () => {
            await discovery.run();
          },
          listener: listeners,
        });
        await health.start();

        const annotationsOf = createEntityAnnotationReader({
          catalog,
          auth,
          logger,
        });
        // Each component's project decides what its writes may touch (routes), where the
        // reconcile may place it and which namespaces Fleet may create for it (applies).
        const projects = ProjectGuard.create({
          projects: fleetConfig.projects,
          ownerOf: createEntityOwnerReader({ catalog, auth }),
          deployNamespace: fleetConfig.deploy.namespace,
          forbiddenNamespaces: fleetConfig.deploy.forbiddenNamespaces,
        });
        const applier = ManifestApplier.create({
          clients,
          mayCreateNamespace: request => projects.mayCreateNamespace(request),
        });
        // The objects of components that bring their own manifests, of any kind.
        const objectApplier = ObjectSetApplier.create({ clients });
        const deployments = DeploymentService.create({
          stores,
          applier,
          remover: ManifestRemover.create({ clients }),
          logger: logger.child({ task: 'fleet-deploy' }),
          deploy: fleetConfig.deploy,
          annotationsOf,
          revisionRefusal: request => projects.revisionRefusal(request),
          objectsRefusal: request => projects.objectsRefusalOf(request),
          sourceRefusal: request => projects.sourceRefusalOf(request),
          manifestSources,
          manifestReader: new ManifestReader(urlReader),
          objectApplier,
          listener: listeners,
        });
        lifecycle.addStartupHook(async () => {
          await deployments.adoptUnfinished();
        });
        // One hook, in order: shutdown hooks run concurrently, and the rollouts being followed
        // need their connections until they stop.
        lifecycle.addShutdownHook(async () => {
          // With shards, this replica's are let go for the others to take at once.
          await health.stop({ release: true });
          await deployments.stop();
          clients.dispose();
          fleetMetrics.dispose();
          // Signals and notifications under way go out, for a few seconds at most.
          await Promise.race([
            listeners.settled(),
            new Promise(resolve => setTimeout(resolve, 5_000).unref()),
          ]);
        });

        // The freeze windows of the configuration, on the release rules' clock.
        const freezeWindows = FreezeWindows.create(
          fleetConfig.release.freezeWindows,
          () => clock.now(),
        );
        const releases = ReleaseService.create({
          stores,
          deployments,
          windows: freezeWindows,
          notices: fleetConfig.notifications.enabled
            ? createReleaseGateNotices({ notifications })
            : undefined,
          logger: logger.child({ task: RELEASE_TASK_ID }),
          clock: () => clock.now(),
        });
        const analysis = AnalysisProviders.create({
          providers: [
            ...addedAnalysisProviders,
            // Only the platform's Prometheus servers, also for releases accepted before the list.
            createPrometheusAnalysisProvider({
              allowedAddresses:
                fleetConfig.analysis.prometheus.allowedAddresses,
            }),
          ],
          logger: logger.child({ task: RELEASE_TASK_ID }),
        });
        const orchestrator = ReleaseOrchestrator.create({
          stores,
          deployments,
          traffic: TrafficProviders.create({
            clients,
            providers: [...addedTrafficProviders, ...builtInTrafficProviders()],
          }),
          logger: logger.child({ task: RELEASE_TASK_ID }),
          scheduler,
          defaultReplicas: fleetConfig.deploy.defaultReplicas,
          namespace: fleetConfig.deploy.namespace,
          measure: (template, context, options) =>
            analysis.measure(template, context, options),
          // A template judged against a baseline reads the same allowed servers only.
          queryRange: (template, variant, context, window, options) =>
            queryRange(template, variant, context, window, {
              ...options,
              allowedAddresses:
                fleetConfig.analysis.prometheus.allowedAddresses,
            }),
          // Releases waiting for a freeze window start when it closes (none configured: none wait).
          listener: listeners,
          openGates:
            fleetConfig.release.freezeWindows.length > 0
              ? () => releases.openClosedWindows()
              : undefined,
        });
        await orchestrator.start();

        // Live state from watches: a change of a deployment's objects is compared at once.
        const liveState = fleetConfig.reconcile.watch
          ? ClusterWatches.create({
              clients,
              applier,
              logger: logger.child({ task: 'fleet-watch' }),
              // Without shards the reconcile task runs on one replica at a time: a replica it
              // left stops watching after three intervals without a run, never before the task's
              // timeout. With shards every replica runs it over its own shards' clusters.
              staleAfterMs: Math.max(
                3 * fleetConfig.reconcile.intervalMs,
                10 * 60_000,
              ),
            })
          : undefined;
        const reconciler = ReconcileWorker.create({
          stores,
          applier,
          objectApplier,
          liveState,
          deployments,
          logger: logger.child({ task: 'fleet-reconcile' }),
          scheduler,
          deploy: fleetConfig.deploy,
          reconcile: fleetConfig.reconcile,
          annotationsOf,
          heldDeployments: () => orchestrator.heldDeployments(),
          placementGate: createPlacementGate(
            permissionsRegistry.getPermissionRuleset(
              fleetClusterPermissionResourceRef,
            ),
          ),
          // The project's rules, then the stages': a stage that requires another takes
          // versions by releases only, so the placement brings it none.
          projectGate: async (application, cluster) =>
            (await projects.placementRefusal(application, cluster)) ??
            releases.placementRefusal(application, cluster.name),
          objectsRefusal: request => projects.objectsRefusalOf(request),
          // With shards, each replica reconciles and watches the clusters of its own shards.
          shards: health.shardOwnership(),
          listener: listeners,
        });
        if (liveState) {
          const driftChecks = DriftChecks.create({
            check: changes => reconciler.checkChanged(changes),
            logger: logger.child({ task: 'fleet-reconcile' }),
          });
          liveState.listen(
            change => driftChecks.changed(change),
            // What was there before a cluster's watches started is compared once they listed.
            cluster => {
              for (const object of reconciler.objectsOn(cluster))
                driftChecks.changed(object);
            },
          );
          listeners.add(liveState);
          lifecycle.addShutdownHook(async () => {
            liveState.stop();
            // A check under way writes to the stores: it ends before they close.
            await driftChecks.stop();
          });
        }
        await reconciler.start();

        const retention = EventRetention.create({
          store: stores.events,
          logger: logger.child({ task: EVENT_RETENTION_TASK_ID }),
          scheduler,
          events: fleetConfig.events,
        });
        await retention.start();

        httpRouter.addAuthPolicy({ path: '/health', allow: 'unauthenticated' });
        httpRouter.use(
          await createRouter({
            logger,
            auditor,
            httpAuth,
            permissions,
            stores,
            runHealthCycle: () => health.runManualCycle(),
            deployments,
            releases,
            deciderOf: createDeciderReader({ catalog, auth, userInfo }),
            // From a discovery at most manualMinInterval old, shared: a DELETE does not read
            // every kubeconfig source each.
            isDiscovered: async name =>
              (
                await discovery.discoveredNames(
                  fleetConfig.health.manualMinIntervalMs,
                )
              ).has(name),
            clusterCa: cluster => clients.caFingerprintFor(cluster),
            maxManualClusters: fleetConfig.clusters.maxManual,
            progressDeadlineMs: fleetConfig.deploy.progressDeadlineMs,
            tenancy: createTenancyChecks({ guard: projects, stores }),
            allowedPrometheusAddresses:
              fleetConfig.analysis.prometheus.allowedAddresses,
            analysisProviders: analysis.names(),
            freezeWindows,
            // One key for every replica: a cursor one handed out pages on at another.
            cursorKey: await stores.state.cursorSigningKey(),
          }),
        );
      },
    });
  },
});
