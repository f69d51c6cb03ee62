import { NotFoundError, ConflictError, InputError } from '@backstage/errors';
import {
  fleetClusterCreatePermission,
  fleetClusterDeletePermission,
  fleetClusterUpdatePermission,
} from '@cnp/plugin-fleet-common';
import { ADMIN_VIEW, toApiCluster, toApiEvent } from '../apiShapes';
import { actorOf } from '../requirePermission';
import { sendJson } from '../sendJson';
import { parseCreateCluster, parsePatchCluster } from '../validation';
import { parseListQuery } from '../queryValidation';
import type { FleetRouter, RouteContext } from '../routeContext';

const DEFAULT_MAX_MANUAL_CLUSTERS = 1000;

/** The clusters: list, manual registration, settings, removal and each cluster's events. */
export function registerClusterRoutes(
  router: FleetRouter,
  ctx: RouteContext,
): void {
  listClusters(router, ctx);
  registerCluster(router, ctx);
  getCluster(router, ctx);
  updateCluster(router, ctx);
  deleteCluster(router, ctx);
  listClusterEvents(router, ctx);
}

/**
 * The clusters `?name=a&name=b` asks for, or undefined without `name`. Read from the URL itself:
 * Express's query parser turns more than 20 repeats into an object, and `name[]=` or `name[x]=`
 * into other shapes, which are refused rather than read as no filter.
 */
function clusterNamesOf(req: {
  originalUrl: string;
  query: { name?: unknown };
}): string[] | undefined {
  const names = new URL(
    req.originalUrl,
    'http://fleet.invalid',
  ).searchParams.getAll('name');
  if (names.length === 0) {
    if (req.query.name === undefined) return undefined;
    throw new InputError(
      'Invalid query: name: give each cluster as its own name=<cluster> parameter',
    );
  }
  // Each name, and how many, are the spec's to check (the `name` query parameter).
  return names;
}

/**
 * `GET /clusters`: paged, kubeconfigRefs shown to cluster admins only; `?name=` (repeated, at
 * most 100, `FLEET_CLUSTER_NAMES_MAX`) keeps only the clusters of those names, so that a card
 * reads the clusters it shows rather than the fleet.
 */
function listClusters(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  const { pages, viewOf } = ctx;
  router.get('/clusters', async (req, res) => {
    const names = clusterNamesOf(req);
    const query = parseListQuery('/clusters', { ...req.query, name: names });
    const view = await viewOf(req);
    const page = pages.read('clusters', query);
    const clusters = await stores.clusters.listClusters({
      status: query.status,
      names,
      page,
    });
    sendJson(
      req,
      res,
      pages.answer(
        'clusters',
        page,
        clusters,
        c => [c.name],
        c => toApiCluster(c, view),
      ),
    );
  });
}

/** `POST /clusters`: a manual registration (`fleet.cluster.create`). */
function registerCluster(router: FleetRouter, ctx: RouteContext) {
  const { options, authorizedWrite, textField } = ctx;
  const { stores, logger } = options;
  router.post('/clusters', async (req, res) => {
    const cluster = await authorizedWrite(
      req,
      {
        eventId: 'cluster-create',
        meta: { cluster: textField(req.body, 'name') },
        permission: fleetClusterCreatePermission,
      },
      async credentials => {
        // Validated after the permission check: a caller who may not register gets 403, not a
        // description of the schema.
        const body = parseCreateCluster(req.body);
        const actor = actorOf(credentials);
        // One API server is one cluster: registering a known (server, CA) again is a 409
        // naming the cluster that holds it.
        const identityCa = await options.clusterCa?.(body);
        const created = await stores.clusters.insertCluster(
          { ...body, source: 'manual', identityCa, actor },
          {
            maxManual: options.maxManualClusters ?? DEFAULT_MAX_MANUAL_CLUSTERS,
          },
        );
        logger.info(
          `Cluster '${created.name}' registered manually by ${actor}`,
          { cluster: created.name, actor },
        );
        return created;
      },
    );
    // The registrar gave the kubeconfigRef; clusters are theirs to administer.
    res.status(201).json(toApiCluster(cluster, ADMIN_VIEW));
  });
}

/** `GET /clusters/:name`. */
function getCluster(router: FleetRouter, ctx: RouteContext) {
  const { viewOf, getClusterOr404 } = ctx;
  router.get('/clusters/:name', async (req, res) => {
    const cluster = await getClusterOr404(req.params.name);
    sendJson(req, res, toApiCluster(cluster, await viewOf(req)));
  });
}

/** `PATCH /clusters/:name`: a cluster's settings (`fleet.cluster.update`). */
function updateCluster(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  const { authorizedWrite, getClusterOr404 } = ctx;
  router.patch('/clusters/:name', async (req, res) => {
    const updated = await authorizedWrite(
      req,
      {
        eventId: 'cluster-update',
        meta: { cluster: req.params.name },
        permission: fleetClusterUpdatePermission,
      },
      async credentials => {
        // Validated after the permission check: a caller who may not update gets 403, not a
        // description of the schema.
        const body = parsePatchCluster(req.body);
        const cluster = await getClusterOr404(req.params.name);
        const result = await stores.clusters.updateClusterSettings(
          cluster.name,
          body,
          actorOf(credentials),
        );
        if (!result)
          throw new NotFoundError(`Cluster '${cluster.name}' not found`);
        return result;
      },
    );
    res.json(toApiCluster(updated, ADMIN_VIEW)); // allowed fleet.cluster.update: an admin
  });
}

/** `DELETE /clusters/:name`: a manual cluster, or a discovered one its kubeconfig no longer names, without deployments. */
function deleteCluster(router: FleetRouter, ctx: RouteContext) {
  const { options, authorizedWrite, getClusterOr404 } = ctx;
  const { stores, logger } = options;
  router.delete('/clusters/:name', async (req, res) => {
    await authorizedWrite(
      req,
      {
        eventId: 'cluster-delete',
        meta: { cluster: req.params.name },
        permission: fleetClusterDeletePermission,
      },
      async credentials => {
        const cluster = await getClusterOr404(req.params.name);
        // A discovered cluster goes once its kubeconfig no longer names it; before that, discovery
        // would only bring it back.
        if (
          cluster.source !== 'manual' &&
          (!options.isDiscovered || (await options.isDiscovered(cluster.name)))
        ) {
          throw new ConflictError(
            `Cluster '${cluster.name}' is discovered from ${cluster.kubeconfigRef}; remove it from the kubeconfig first`,
          );
        }
        const left = await stores.deployments.listDeployments({
          cluster: cluster.name,
        });
        if (left.length > 0) {
          const named = left
            .slice(0, 10)
            .map(d => `${d.entityRef} (${d.id})`)
            .join(', ');
          throw new ConflictError(
            `Cluster '${cluster.name}' still has ${
              left.length
            } deployment(s): ${named}${
              left.length > 10 ? ', …' : ''
            }; undeploy them first`,
          );
        }
        const actor = actorOf(credentials);
        await stores.clusters.deleteCluster(cluster.name, actor);
        logger.info(`Cluster '${cluster.name}' deleted by ${actor}`, {
          cluster: cluster.name,
          actor,
        });
      },
    );
    res.status(204).end();
  });
}

/** `GET /clusters/:name/events`. */
function listClusterEvents(router: FleetRouter, ctx: RouteContext) {
  const { stores } = ctx.options;
  const { viewOf, getClusterOr404 } = ctx;
  router.get('/clusters/:name/events', async (req, res) => {
    const cluster = await getClusterOr404(req.params.name);
    const view = await viewOf(req);
    sendJson(req, res, {
      items: (
        await stores.events.listEvents({
          subjectKind: 'cluster',
          subject: cluster.name,
        })
      ).map(e => toApiEvent(e, view)),
    });
  });
}
