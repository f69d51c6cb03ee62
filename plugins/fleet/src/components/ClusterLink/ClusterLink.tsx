import { configApiRef, useApi } from '@backstage/core-plugin-api';
import { EntityRefLink } from '@backstage/plugin-catalog-react';

/**
 * A cluster's name, linked to its catalog page: Fleet's catalog module publishes each cluster as
 * a `Resource` of type `kubernetes-cluster` named after it, in `fleet.catalog.namespace`
 * (`default` unless configured).
 */
export function ClusterLink(props: { name: string }) {
  const namespace =
    useApi(configApiRef).getOptionalString('fleet.catalog.namespace') ??
    'default';
  return (
    <EntityRefLink
      entityRef={{ kind: 'resource', namespace, name: props.name }}
    >
      {props.name}
    </EntityRefLink>
  );
}
