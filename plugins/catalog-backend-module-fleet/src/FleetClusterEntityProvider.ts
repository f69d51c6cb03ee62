import {
  LoggerService,
  readSchedulerServiceTaskScheduleDefinitionFromConfig,
  SchedulerService,
  SchedulerServiceTaskScheduleDefinition,
} from '@backstage/backend-plugin-api';
import {
  ANNOTATION_LOCATION,
  ANNOTATION_ORIGIN_LOCATION,
  DEFAULT_NAMESPACE,
  Entity,
  makeValidator,
  parseEntityRef,
  stringifyEntityRef,
} from '@backstage/catalog-model';
import { Config } from '@backstage/config';
import { ForwardedError, toError } from '@backstage/errors';
import type {
  EntityProvider,
  EntityProviderConnection,
} from '@backstage/plugin-catalog-node';
import {
  FLEET_CLUSTER_RESOURCE_TYPE,
  type Cluster,
} from '@cnp/plugin-fleet-common';
import type { FleetService } from '@cnp/plugin-fleet-node';

/** Annotations Fleet puts on the cluster entities it publishes. @public */
export const FLEET_CLUSTER_ANNOTATIONS = {
  name: 'cnp.io/cluster-name',
  status: 'cnp.io/cluster-status',
  statusReason: 'cnp.io/cluster-status-reason',
  endpoint: 'cnp.io/cluster-endpoint',
  source: 'cnp.io/cluster-source',
  serverVersion: 'cnp.io/cluster-server-version',
} as const;

const PROVIDER_NAME = 'fleet-clusters';
const DEFAULT_OWNER = 'group:default/platform';
const DEFAULT_SCHEDULE: SchedulerServiceTaskScheduleDefinition = {
  frequency: { seconds: 30 },
  timeout: { minutes: 1 },
  // Leaves the fleet plugin time to start: the provider reads it over HTTP.
  initialDelay: { seconds: 10 },
};

/** How cluster entities look: namespace and owner. @public */
export interface ClusterEntityOptions {
  namespace: string;
  owner: string;
}

const validator = makeValidator();

/** The reason code of a status reason such as `NOT_PROBEABLE: kubeconfigRef ...`. */
function reasonCode(
  statusReason: string | null | undefined,
): string | undefined {
  const match = statusReason?.match(/^[A-Z][A-Z0-9_]*/);
  return match?.[0];
}

/**
 * Text made inert for the catalog, which renders descriptions as Markdown: a code span, whose
 * content Markdown shows as it is (no link, image or HTML), with the backticks and line breaks
 * that could end it taken out.
 */
export function markdownCode(text: string): string {
  return `\`${text.replace(/[`\r\n]+/g, '')}\``;
}

/**
 * The catalog entity of one cluster: a `Resource` of type `kubernetes-cluster`, named after the
 * cluster, with its status, endpoint and source in annotations and its labels as entity labels.
 * It carries what the Fleet API shows, never kubeconfig contents.
 *
 * @public
 */
export function clusterToEntity(
  cluster: Cluster,
  options: ClusterEntityOptions,
): Entity {
  const location = `fleet:cluster/${cluster.name}`;
  const labels = Object.fromEntries(
    Object.entries(cluster.labels ?? {}).filter(
      ([key, value]) =>
        validator.isValidLabelKey(key) && validator.isValidLabelValue(value),
    ),
  );
  const code = reasonCode(cluster.statusReason);
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Resource',
    metadata: {
      name: cluster.name,
      namespace: options.namespace,
      title: cluster.name,
      description: `Kubernetes cluster at ${markdownCode(cluster.endpoint)} (${
        cluster.source === 'manual'
          ? 'registered manually'
          : 'discovered from a kubeconfig'
      }), tracked by Fleet.`,
      labels,
      annotations: {
        [ANNOTATION_LOCATION]: location,
        [ANNOTATION_ORIGIN_LOCATION]: location,
        [FLEET_CLUSTER_ANNOTATIONS.name]: cluster.name,
        [FLEET_CLUSTER_ANNOTATIONS.status]: cluster.status,
        ...(code ? { [FLEET_CLUSTER_ANNOTATIONS.statusReason]: code } : {}),
        [FLEET_CLUSTER_ANNOTATIONS.endpoint]: cluster.endpoint,
        [FLEET_CLUSTER_ANNOTATIONS.source]: cluster.source,
        ...(cluster.serverVersion
          ? { [FLEET_CLUSTER_ANNOTATIONS.serverVersion]: cluster.serverVersion }
          : {}),
      },
      tags: ['kubernetes', 'fleet'],
    },
    spec: {
      type: FLEET_CLUSTER_RESOURCE_TYPE,
      owner: options.owner,
    },
  };
}

/**
 * Publishes every Fleet cluster to the catalog. Each refresh reads the clusters from the Fleet
 * API and applies a full mutation, so clusters that appear, change status or disappear reach the
 * catalog at the next refresh. A failed read changes nothing in the catalog (it never publishes
 * an empty fleet because Fleet did not answer).
 *
 * Configuration (all optional): `fleet.catalog.schedule` (default every 30 s),
 * `fleet.catalog.owner` (default `group:default/platform`) and `fleet.catalog.namespace`.
 *
 * @public
 */
export class FleetClusterEntityProvider implements EntityProvider {
  private connection?: EntityProviderConnection;

  private constructor(
    private readonly client: Pick<FleetService, 'listClusters'>,
    private readonly logger: LoggerService,
    private readonly scheduler: SchedulerService,
    private readonly schedule: SchedulerServiceTaskScheduleDefinition,
    private readonly entityOptions: ClusterEntityOptions,
  ) {}

  static fromConfig(
    config: Config,
    deps: {
      client: Pick<FleetService, 'listClusters'>;
      logger: LoggerService;
      scheduler: SchedulerService;
    },
  ): FleetClusterEntityProvider {
    const schedule = config.has('fleet.catalog.schedule')
      ? readSchedulerServiceTaskScheduleDefinitionFromConfig(
          config.getConfig('fleet.catalog.schedule'),
        )
      : DEFAULT_SCHEDULE;
    const namespace =
      config.getOptionalString('fleet.catalog.namespace') ?? DEFAULT_NAMESPACE;
    const ownerRef =
      config.getOptionalString('fleet.catalog.owner') ?? DEFAULT_OWNER;
    let owner: string;
    try {
      const parsed = parseEntityRef(ownerRef, {
        defaultKind: 'group',
        defaultNamespace: namespace,
      });
      if (
        !validator.isValidKind(parsed.kind) ||
        !validator.isValidNamespace(parsed.namespace) ||
        !validator.isValidEntityName(parsed.name)
      ) {
        throw new Error(
          'expected an entity ref such as group:default/platform',
        );
      }
      owner = stringifyEntityRef(parsed);
    } catch (error) {
      throw new Error(
        `Invalid config value fleet.catalog.owner='${ownerRef}': ${
          toError(error).message
        }`,
      );
    }
    if (!validator.isValidNamespace(namespace)) {
      throw new Error(
        `Invalid config value fleet.catalog.namespace='${namespace}'`,
      );
    }
    return new FleetClusterEntityProvider(
      deps.client,
      deps.logger,
      deps.scheduler,
      schedule,
      {
        namespace,
        owner,
      },
    );
  }

  /** The id of the scheduled refresh task. */
  static readonly taskId = `${PROVIDER_NAME}:refresh`;

  getProviderName(): string {
    return PROVIDER_NAME;
  }

  async connect(connection: EntityProviderConnection): Promise<void> {
    this.connection = connection;
    await this.scheduler.scheduleTask({
      ...this.schedule,
      id: FleetClusterEntityProvider.taskId,
      scope: this.schedule.scope ?? 'global',
      fn: async () => {
        try {
          await this.refresh();
        } catch (error) {
          throw new ForwardedError(
            'Publishing Fleet clusters to the catalog failed',
            error,
          );
        }
      },
    });
  }

  /** Reads the clusters from Fleet and replaces the provider's entities with them. */
  async refresh(): Promise<{ clusters: number }> {
    if (!this.connection) {
      throw new Error(`${PROVIDER_NAME} is not connected to the catalog yet`);
    }
    const clusters = await this.client.listClusters();
    await this.connection.applyMutation({
      type: 'full',
      entities: clusters.map(cluster => ({
        entity: clusterToEntity(cluster, this.entityOptions),
        locationKey: `fleet-provider:${PROVIDER_NAME}`,
      })),
    });
    this.logger.debug(
      `Published ${clusters.length} Fleet cluster(s) to the catalog`,
      { clusters: clusters.length },
    );
    return { clusters: clusters.length };
  }
}
