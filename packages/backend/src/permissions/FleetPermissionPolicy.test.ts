import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ConfigReader } from '@backstage/config';
import {
  AuthorizeResult,
  createPermission,
} from '@backstage/plugin-permission-common';
import type { PolicyQueryUser } from '@backstage/plugin-permission-node';
import { kubernetesProxyPermission } from '@backstage/plugin-kubernetes-common';
import { fleetPermissions } from '@cnp/plugin-fleet-common';
import { fleetClusterPermissionRules } from '@cnp/plugin-fleet-node';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { CatalogGroupResolver } from './CatalogGroupResolver';
import { FleetPermissionPolicy } from './FleetPermissionPolicy';

const byName = (name: string) =>
  [...fleetPermissions, kubernetesProxyPermission].find(p => p.name === name)!;

/** A signed-in user who owns through `ownershipEntityRefs` (their groups). */
function user(
  ref: string,
  ownershipEntityRefs: string[] = [ref],
): PolicyQueryUser {
  return {
    credentials: mockCredentials.user(ref),
    info: { userEntityRef: ref, ownershipEntityRefs },
  };
}

function policy(config: object = {}, ownership: Record<string, string[]> = {}) {
  const userInfo = mockServices.userInfo.mock({
    getUserInfo: async credentials => {
      const ref = (credentials.principal as { userEntityRef: string })
        .userEntityRef;
      return {
        userEntityRef: ref,
        ownershipEntityRefs: ownership[ref] ?? [ref],
      };
    },
  });
  // A catalog without these users: the policy decides on the token's claims (userInfo).
  const groups = CatalogGroupResolver.create({
    catalog: catalogServiceMock({ entities: [] }),
    auth: mockServices.auth(),
    userInfo,
    logger: mockServices.logger.mock(),
  });
  return FleetPermissionPolicy.fromConfig(new ConfigReader(config), {
    groups,
  });
}

describe('FleetPermissionPolicy', () => {
  const guest = 'user:default/guest';
  const guestGroups = { [guest]: [guest, 'group:default/guests'] };

  it.each([
    'fleet.deployment.create',
    'fleet.deployment.delete',
    'fleet.release.manage',
  ])(
    'makes %s conditional on owning the entity, with the caller’s claims',
    async name => {
      const decision = await policy({}, guestGroups).handle(
        { permission: byName(name) },
        user(guest),
      );
      expect(decision).toEqual({
        result: AuthorizeResult.CONDITIONAL,
        pluginId: 'catalog',
        resourceType: 'catalog-entity',
        conditions: {
          rule: 'IS_ENTITY_OWNER',
          resourceType: 'catalog-entity',
          params: { claims: [guest, 'group:default/guests'] },
        },
      });
    },
  );

  it('lets members of a configured deployer group deploy the components whose cnp.io/deployers names their group, besides the ones they own', async () => {
    const p = policy(
      {
        fleet: { permissions: { deployers: ['guests', 'group:default/Ops'] } },
      },
      {
        ...guestGroups,
        'user:default/olga': ['user:default/olga', 'group:default/ops'],
      },
    );
    const deploy = { permission: byName('fleet.deployment.create') };
    const owner = (claims: string[]) => ({
      rule: 'IS_ENTITY_OWNER',
      resourceType: 'catalog-entity',
      params: { claims },
    });
    const named = (group: string) => ({
      rule: 'HAS_ANNOTATION',
      resourceType: 'catalog-entity',
      params: { annotation: 'cnp.io/deployers', value: group },
    });
    expect(await p.handle(deploy, user(guest))).toEqual({
      result: AuthorizeResult.CONDITIONAL,
      pluginId: 'catalog',
      resourceType: 'catalog-entity',
      conditions: {
        anyOf: [
          owner([guest, 'group:default/guests']),
          named('group:default/guests'),
        ],
      },
    });
    expect(await p.handle(deploy, user('user:default/olga'))).toMatchObject({
      conditions: {
        anyOf: [
          owner(['user:default/olga', 'group:default/ops']),
          named('group:default/ops'),
        ],
      },
    });
    // Outside the deployer groups: owners only.
    expect(await p.handle(deploy, user('user:default/mallory'))).toMatchObject({
      conditions: owner(['user:default/mallory']),
    });
  });

  it.each([
    'fleet.cluster.create',
    'fleet.cluster.update',
    'fleet.health.run',
    'kubernetes.proxy',
  ])(
    'refuses %s to the guest with the shipped app-config.yaml: it names no cluster admin (the demo grants it in its local config)',
    async name => {
      const shipped = parse(
        fs.readFileSync(
          path.resolve(__dirname, '../../../../app-config.yaml'),
          'utf8',
        ),
      );
      expect(shipped.fleet.permissions.clusterAdmins ?? []).toEqual([]);
      expect(
        await policy(shipped, guestGroups).handle(
          { permission: byName(name) },
          user(guest, guestGroups[guest]),
        ),
      ).toEqual({ result: AuthorizeResult.DENY });
    },
  );

  it.each([
    'fleet.cluster.create',
    'fleet.cluster.update',
    'fleet.cluster.delete',
    'fleet.health.run',
    // The Kubernetes tab's proxy acts with Fleet's kubeconfig credentials.
    'kubernetes.proxy',
  ])(
    'refuses %s to every user while no cluster admins are configured, and allows it to the configured ones only',
    async name => {
      const request = { permission: byName(name) };
      // Fail closed: nobody is an admin until the config names them.
      expect(
        await policy().handle(request, user('user:default/anyone')),
      ).toEqual({ result: AuthorizeResult.DENY });
      expect(
        await policy({ fleet: { permissions: { clusterAdmins: [] } } }).handle(
          request,
          user('user:default/anyone'),
        ),
      ).toEqual({ result: AuthorizeResult.DENY });
      const narrowed = policy(
        {
          fleet: { permissions: { clusterAdmins: ['group:default/platform'] } },
        },
        {
          'user:default/pat': ['user:default/pat', 'group:default/platform'],
        },
      );
      expect(await narrowed.handle(request, user('user:default/pat'))).toEqual({
        result: AuthorizeResult.ALLOW,
      });
      expect(
        await narrowed.handle(request, user('user:default/anyone')),
      ).toEqual({ result: AuthorizeResult.DENY });
      expect(await narrowed.handle(request)).toEqual({
        result: AuthorizeResult.DENY,
      });
    },
  );

  it('makes fleet.cluster.deploy conditional on the cluster allowing one of the caller’s groups, and allows it to cluster admins', async () => {
    const p = policy(
      { fleet: { permissions: { clusterAdmins: ['group:default/platform'] } } },
      {
        ...guestGroups,
        'user:default/pat': ['user:default/pat', 'group:default/platform'],
      },
    );
    const request = { permission: byName('fleet.cluster.deploy') };
    expect(await p.handle(request, user(guest))).toEqual({
      result: AuthorizeResult.CONDITIONAL,
      pluginId: 'fleet',
      resourceType: 'fleet-cluster',
      conditions: {
        rule: 'ALLOWS_GROUP',
        resourceType: 'fleet-cluster',
        params: { claims: [guest, 'group:default/guests'] },
      },
    });
    expect(await p.handle(request, user('user:default/pat'))).toEqual({
      result: AuthorizeResult.ALLOW,
    });
    expect(await p.handle(request)).toEqual({ result: AuthorizeResult.DENY });
  });

  it('lets a group name with dots admit that group only: payments.platform admits neither payments nor platform', async () => {
    const members = {
      'user:default/pia': ['user:default/pia', 'group:default/payments'],
      'user:default/pam': [
        'user:default/pam',
        'group:default/payments.platform',
      ],
    };
    const p = policy({}, members);
    const request = { permission: byName('fleet.cluster.deploy') };
    /** Whether the policy's decision lets the user deploy to a cluster with these labels. */
    const mayDeploy = async (who: string, labels: Record<string, string>) => {
      const decision = await p.handle(
        request,
        user(who, members[who as keyof typeof members]),
      );
      if (decision.result !== AuthorizeResult.CONDITIONAL)
        return decision.result === AuthorizeResult.ALLOW;
      const { rule, params } = decision.conditions as unknown as {
        rule: string;
        params: { claims: string[] };
      };
      expect(rule).toBe('ALLOWS_GROUP');
      return fleetClusterPermissionRules.allowsGroup.apply(
        { name: 'prod', labels },
        params,
      );
    };
    for (const labels of [
      { 'cnp.io/allowed-groups': 'payments.platform' } as Record<
        string,
        string
      >,
      { 'allowed-groups.cnp.io/payments.platform': 'true' },
    ]) {
      expect(await mayDeploy('user:default/pia', labels)).toBe(false);
      expect(await mayDeploy('user:default/pam', labels)).toBe(true);
    }
    // Two groups: one label each.
    const both = {
      'allowed-groups.cnp.io/payments': 'true',
      'allowed-groups.cnp.io/payments.platform': 'true',
    };
    expect(await mayDeploy('user:default/pia', both)).toBe(true);
    expect(await mayDeploy('user:default/pam', both)).toBe(true);
  });

  it('allows everything that is not Fleet’s', async () => {
    const p = policy({
      fleet: { permissions: { clusterAdmins: ['group:default/platform'] } },
    });
    const catalogRead = createPermission({
      name: 'catalog.entity.read',
      attributes: { action: 'read' },
      resourceType: 'catalog-entity',
    });
    expect(
      await p.handle({ permission: catalogRead }, user('user:default/anyone')),
    ).toEqual({
      result: AuthorizeResult.ALLOW,
    });
    const other = createPermission({
      name: 'other.thing.delete',
      attributes: { action: 'delete' },
    });
    expect(await p.handle({ permission: other })).toEqual({
      result: AuthorizeResult.ALLOW,
    });
  });

  it('refuses a malformed group in config at startup', () => {
    expect(() =>
      policy({ fleet: { permissions: { deployers: ['group:'] } } }),
    ).toThrow(/Invalid config value fleet.permissions.deployers/);
  });
});
