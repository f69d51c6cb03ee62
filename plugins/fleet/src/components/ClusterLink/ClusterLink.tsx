import { EntityRefLink } from '@backstage/plugin-catalog-react';

/**
 * A cluster's name, linked to its catalog page: Fleet publishes each cluster as a `Resource` of
 * type `kubernetes-cluster` named after it.
 */
export function ClusterLink(props: { name: string }) {
  return (
    <EntityRefLink
      entityRef={{ kind: 'resource', namespace: 'default', name: props.name }}
    >
      {props.name}
    </EntityRefLink>
  );
}
