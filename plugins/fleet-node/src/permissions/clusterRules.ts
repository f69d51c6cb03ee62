import {
  createConditionExports,
  createPermissionResourceRef,
  createPermissionRule,
} from '@backstage/plugin-permission-node';
import {
  clusterAllowedGroups,
  FLEET_CLUSTER_PERMISSION_RESOURCE_TYPE,
  type Cluster,
} from '@cnp/plugin-fleet-common';
import { z } from 'zod';

/**
 * The permission resource of a Fleet cluster, for `fleet.cluster.deploy`: the Fleet backend
 * loads clusters by name to evaluate the conditions a policy returns.
 *
 * @public
 */
export const fleetClusterPermissionResourceRef = createPermissionResourceRef<
  Pick<Cluster, 'name' | 'labels'>,
  never
>().with({
  pluginId: 'fleet',
  resourceType: FLEET_CLUSTER_PERMISSION_RESOURCE_TYPE,
});

const allowsGroup = createPermissionRule({
  name: 'ALLOWS_GROUP',
  description:
    'The cluster has no cnp.io/allowed-groups nor allowed-groups.cnp.io/<group> label, or they admit one of the given groups (the caller’s ownership claims)',
  resourceRef: fleetClusterPermissionResourceRef,
  paramsSchema: z.object({
    claims: z
      .array(z.string())
      .describe(
        'The caller’s ownership entity refs, e.g. group:default/team-a',
      ),
  }),
  apply: (cluster, { claims }) => {
    const allowed = clusterAllowedGroups(cluster.labels);
    if (allowed === undefined) return true;
    const mine = claims.map(c => c.toLocaleLowerCase('en-US'));
    return allowed.some(group => mine.includes(group));
  },
  toQuery: () => {
    throw new Error('ALLOWS_GROUP is evaluated on loaded clusters only');
  },
});

const hasLabel = createPermissionRule({
  name: 'HAS_LABEL',
  description: 'The cluster has the label, with the value when one is given',
  resourceRef: fleetClusterPermissionResourceRef,
  paramsSchema: z.object({
    label: z.string().describe('Label key, e.g. env'),
    value: z.string().optional().describe('Label value, e.g. prod'),
  }),
  apply: (cluster, { label, value }) =>
    value === undefined
      ? cluster.labels?.[label] !== undefined
      : cluster.labels?.[label] === value,
  toQuery: () => {
    throw new Error('HAS_LABEL is evaluated on loaded clusters only');
  },
});

/**
 * The rules a policy can use in a conditional decision on `fleet.cluster.deploy`.
 *
 * @public
 */
export const fleetClusterPermissionRules = { allowsGroup, hasLabel };

const { conditions, createConditionalDecision } = createConditionExports({
  resourceRef: fleetClusterPermissionResourceRef,
  rules: fleetClusterPermissionRules,
});

/**
 * Conditions for policies on `fleet.cluster.deploy`, e.g.
 * `fleetClusterConditions.allowsGroup({ claims: user.info.ownershipEntityRefs })`.
 *
 * @public
 */
export const fleetClusterConditions = conditions;

/**
 * Builds the conditional decision a policy returns for `fleet.cluster.deploy`.
 *
 * @public
 */
export const createFleetClusterConditionalDecision = createConditionalDecision;
