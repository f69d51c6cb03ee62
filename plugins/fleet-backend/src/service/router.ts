import {
  HttpAuthService,
  LoggerService,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { ConflictError, NotFoundError } from '@backstage/errors';
import {
  DEPLOYMENT_STATUSES,
  fleetClusterCreatePermission,
  fleetClusterDeletePermission,
  fleetClusterUpdatePermission,
  fleetDeploymentCreatePermission,
  fleetHealthRunPermission,
  SYNC_STATUSES,
  type Cluster,
  type FleetSummary,
  type HealthCycleSummary,
  type MassOutageWarning,
} from '@cnp/plugin-fleet-common';
import express from 'express';
import Router from 'express-promise-router';
import type { ClusterRecord, FleetStore } from '../database/FleetStore';
import type { DeploymentService } from '../deploy/DeploymentService';
import { normalizeEntityRef } from '../deploy/DeploymentService';
import { LAST_CYCLE_STATE_KEY, MASS_OUTAGE_STATE_KEY } from '../health/HealthWorker';
import { actorOf, requirePermission } from './requirePermission';
import {
  applicationListQuerySchema,
  clusterListQuerySchema,
  createApplicationSchema,
  createDeploymentSchema,
  deploymentListQuerySchema,
  idSchema,
  patchApplicationSchema,
  clusterNameSchema,
  createClusterSchema,
  parseOrThrow,
  patchClusterSchema,
} from './validation';

export interface RouterOptions {
  logger: LoggerService;
  httpAuth: HttpAuthService;
  permissions: PermissionsService;
  store: FleetStore;
  /** Runs one health cycle now, waiting for a running one to finish first. */
  runHealthCycle: () => Promise<HealthCycleSummary>;
  deployments: Pick<DeploymentService, 'deploy' | 'registerApplication' | 'updateApplication'>;
}

/** The API shape of a cluster: the stored record without internal bookkeeping. */
function toApiCluster(record: ClusterRecord): Cluster {
  const { cascadeHeldAt: _held, ...cluster } = record;
  return cluster;
}

export async function createRouter(options: RouterOptions): Promise<express.Router> {
  const { httpAuth, permissions, store, runHealthCycle, logger, deployments } = options;
  const router = Router();
  router.use(express.json({ limit: '64kb' }));

  // Liveness answers without credentials (see the auth policy in plugin.ts), like Backstage's
  // own plugins; it says nothing about the fleet.
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  // Every other route needs an authenticated principal, reads included.
  router.use(async (req, _res, next) => {
    await httpAuth.credentials(req);
    next();
  });

  const getClusterOr404 = async (rawName: string) => {
    const name = parseOrThrow(clusterNameSchema, rawName, 'cluster name');
    const cluster = await store.getCluster(name);
    if (!cluster) throw new NotFoundError(`Cluster '${name}' not found`);
    return cluster;
  };

  router.get('/clusters', async (req, res) => {
    const query = parseOrThrow(clusterListQuerySchema, req.query, 'query');
    const clusters = await store.listClusters({ status: query.status });
    res.json({ items: clusters.map(toApiCluster) });
  });

  router.post('/clusters', async (req, res) => {
    const body = parseOrThrow(createClusterSchema, req.body, 'cluster');
    await requirePermission({ httpAuth, permissions }, req, fleetClusterCreatePermission);
    const cluster = await store.insertCluster({ ...body, source: 'manual' });
    logger.info(`Cluster '${cluster.name}' registered manually`);
    res.status(201).json(toApiCluster(cluster));
  });

  router.get('/clusters/:name', async (req, res) => {
    res.json(toApiCluster(await getClusterOr404(req.params.name)));
  });

  router.patch('/clusters/:name', async (req, res) => {
    const body = parseOrThrow(patchClusterSchema, req.body, 'cluster update');
    await requirePermission({ httpAuth, permissions }, req, fleetClusterUpdatePermission);
    const cluster = await getClusterOr404(req.params.name);
    const updated = await store.updateClusterSettings(cluster.name, body);
    if (!updated) throw new NotFoundError(`Cluster '${cluster.name}' not found`);
    res.json(toApiCluster(updated));
  });

  router.delete('/clusters/:name', async (req, res) => {
    const credentials = await requirePermission(
      { httpAuth, permissions },
      req,
      fleetClusterDeletePermission,
    );
    const cluster = await getClusterOr404(req.params.name);
    if (cluster.source !== 'manual') {
      throw new ConflictError(
        `Cluster '${cluster.name}' was discovered from ${cluster.kubeconfigRef}; remove it from the kubeconfig instead`,
      );
    }
    const deployments = await store.countDeploymentsOnCluster(cluster.name);
    if (deployments > 0) {
      throw new ConflictError(
        `Cluster '${cluster.name}' still has ${deployments} deployment(s); remove them first`,
      );
    }
    await store.deleteCluster(cluster.name);
    logger.info(`Cluster '${cluster.name}' deleted by ${actorOf(credentials)}`);
    res.status(204).end();
  });

  router.get('/clusters/:name/events', async (req, res) => {
    const cluster = await getClusterOr404(req.params.name);
    res.json({ items: await store.listEvents({ subjectKind: 'cluster', subject: cluster.name }) });
  });

  router.post('/health/run', async (req, res) => {
    await requirePermission({ httpAuth, permissions }, req, fleetHealthRunPermission);
    res.json(await runHealthCycle());
  });

  router.get('/summary', async (_req, res) => {
    const counts = await store.getSummaryCounts();
    const massOutage = (await store.getState<MassOutageWarning>(MASS_OUTAGE_STATE_KEY)) ?? {
      active: false,
      clusters: [],
    };
    const lastCycle = await store.getState<HealthCycleSummary>(LAST_CYCLE_STATE_KEY);
    const sum = (values: Record<string, number>) => Object.values(values).reduce((a, b) => a + b, 0);
    const summary: FleetSummary = {
      clusters: { total: sum(counts.clusters), ...counts.clusters },
      deployments: {
        total: sum(counts.deploymentsByStatus),
        byStatus: { ...Object.fromEntries(DEPLOYMENT_STATUSES.map(s => [s, 0])), ...counts.deploymentsByStatus } as FleetSummary['deployments']['byStatus'],
        bySyncStatus: { ...Object.fromEntries(SYNC_STATUSES.map(s => [s, 0])), ...counts.deploymentsBySyncStatus } as FleetSummary['deployments']['bySyncStatus'],
      },
      massOutage,
      lastCycleAt: lastCycle?.finishedAt,
    };
    res.json(summary);
  });

  router.get('/applications', async (req, res) => {
    const query = parseOrThrow(applicationListQuerySchema, req.query, 'query');
    const entityRef = query.entityRef ? normalizeEntityRef(query.entityRef) : undefined;
    res.json({ items: await store.listApplications({ entityRef }) });
  });

  router.post('/applications', async (req, res) => {
    const body = parseOrThrow(createApplicationSchema, req.body, 'application');
    const entityRef = normalizeEntityRef(body.entityRef);
    await requirePermission({ httpAuth, permissions }, req, fleetDeploymentCreatePermission, entityRef);
    res.status(201).json(await deployments.registerApplication({ ...body, entityRef }));
  });

  router.patch('/applications/:id', async (req, res) => {
    const id = parseOrThrow(idSchema, req.params.id, 'application id');
    const body = parseOrThrow(patchApplicationSchema, req.body, 'application update');
    const application = await store.getApplication(id);
    if (!application) throw new NotFoundError(`Application '${id}' not found`);
    await requirePermission(
      { httpAuth, permissions },
      req,
      fleetDeploymentCreatePermission,
      application.entityRef,
    );
    res.json(await deployments.updateApplication(id, body));
  });

  router.get('/deployments', async (req, res) => {
    const query = parseOrThrow(deploymentListQuerySchema, req.query, 'query');
    const entityRef = query.entityRef ? normalizeEntityRef(query.entityRef) : undefined;
    res.json({ items: await store.listDeployments({ entityRef, cluster: query.cluster }) });
  });

  router.post('/deployments', async (req, res) => {
    const body = parseOrThrow(createDeploymentSchema, req.body, 'deployment');
    const entityRef = normalizeEntityRef(body.entityRef);
    const credentials = await requirePermission(
      { httpAuth, permissions },
      req,
      fleetDeploymentCreatePermission,
      entityRef,
    );
    const deployment = await deployments.deploy({ ...body, entityRef }, actorOf(credentials));
    res.status(201).json(deployment);
  });

  router.get('/deployments/:id/events', async (req, res) => {
    const id = parseOrThrow(idSchema, req.params.id, 'deployment id');
    const deployment = await store.getDeployment(id);
    if (!deployment) throw new NotFoundError(`Deployment '${id}' not found`);
    res.json({ items: await store.listEvents({ subjectKind: 'deployment', subject: id }) });
  });

  return router;
}
