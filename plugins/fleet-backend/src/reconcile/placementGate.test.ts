import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  createFleetClusterConditionalDecision,
  fleetClusterConditions,
  fleetClusterPermissionRules,
} from '@cnp/plugin-fleet-node';
import { fleetClusterDeployPermission } from '@cnp/plugin-fleet-common';
import { createPlacementGate } from './placementGate';

const rules = Object.values(fleetClusterPermissionRules) as any[];
const gate = createPlacementGate({
  getRuleByName: (name: string) => {
    const rule = rules.find(r => r.name === name);
    if (!rule) throw new Error(`Unknown permission rule '${name}'`);
    return rule;
  },
} as any);
const east = { name: 'east', labels: { 'cnp.io/allowed-groups': 'team-a' } };
const west = { name: 'west', labels: {} };

describe('createPlacementGate', () => {
  it('places nowhere without a recorded decision', () => {
    expect(gate(undefined, west)).toMatch(/^No user has allowed it yet/);
  });

  it('places anywhere with ALLOW and nowhere with DENY, naming whose decision it was', () => {
    const by = 'user:default/bob';
    expect(
      gate({ decision: { result: AuthorizeResult.ALLOW }, by }, east),
    ).toBe(undefined);
    expect(gate({ decision: { result: AuthorizeResult.DENY }, by }, west)).toBe(
      'Not allowed: fleet.cluster.deploy for user:default/bob',
    );
  });

  it('evaluates a conditional decision on each cluster with its labels as they are now', () => {
    const grant = {
      decision: createFleetClusterConditionalDecision(
        fleetClusterDeployPermission,
        fleetClusterConditions.allowsGroup({
          claims: ['group:default/team-b'],
        }),
      ),
      by: 'user:default/bob',
    };
    expect(gate(grant, west)).toBe(undefined);
    expect(gate(grant, east)).toBe(
      'Not allowed: fleet.cluster.deploy for user:default/bob',
    );
    expect(
      gate(grant, {
        ...east,
        labels: {
          'allowed-groups.cnp.io/team-a': 'true',
          'allowed-groups.cnp.io/team-b': 'true',
        },
      }),
    ).toBe(undefined);
  });

  it('refuses a decision it cannot evaluate: another resource type, or a rule it does not know', () => {
    const by = 'user:default/bob';
    expect(
      gate(
        {
          decision: {
            result: AuthorizeResult.CONDITIONAL,
            pluginId: 'catalog',
            resourceType: 'catalog-entity',
            conditions: {
              rule: 'IS_ENTITY_OWNER',
              resourceType: 'catalog-entity',
              params: {},
            },
          },
          by,
        },
        west,
      ),
    ).toMatch(/is not about clusters/);
    expect(
      gate(
        {
          decision: {
            result: AuthorizeResult.CONDITIONAL,
            pluginId: 'fleet',
            resourceType: 'fleet-cluster',
            conditions: {
              rule: 'GONE_RULE',
              resourceType: 'fleet-cluster',
              params: {},
            },
          },
          by,
        },
        west,
      ),
    ).toMatch(/cannot be evaluated \(.*GONE_RULE/);
  });
});
