import { parseEntityRef } from '@backstage/catalog-model';
import type { Application } from '@cnp/plugin-fleet-common';
import {
  isDns1123Label,
  sanitizeK8sName,
  withStableSuffix,
} from '../kubernetes/sanitizeK8sName';

/**
 * The application leaves the replica count to someone else: it lists `/spec/replicas` in
 * `ignoreDifferences`, so neither drift nor a re-apply touches the replicas.
 */
export function ignoresReplicas(application: Application): boolean {
  return (
    application.spec.ignoreDifferences?.includes('/spec/replicas') ?? false
  );
}

/**
 * The Kubernetes name of a component's objects. Every application shares one target namespace,
 * so the name must be unique per entity: a component of the `default` namespace whose name is
 * already a DNS-1123 label keeps it (`payments`); any other (another namespace, or a name that
 * had to be cleaned, like `my_app`) gets a stable hash of the whole entity ref.
 */
export function applicationNameFor(entityRef: string): string {
  const { namespace, name } = parseEntityRef(entityRef);
  if (namespace === 'default' && isDns1123Label(name)) return name;
  const base = namespace === 'default' ? name : `${namespace}-${name}`;
  return withStableSuffix(sanitizeK8sName(base), entityRef);
}
