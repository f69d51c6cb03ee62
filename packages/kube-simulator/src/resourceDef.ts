/**
 * The shape of a resource kind the simulator serves, shared by the tables of kinds
 * (`resources.ts`, `podResources.ts`, `secretsAndIngresses.ts`) and everything that reads them.
 */
export interface ResourceDef {
  group: string; // '' for the core group
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Built-in types: list items carry no kind/apiVersion; PUT without resourceVersion is allowed. */
  builtin: boolean;
  /** Whether metadata.generation is maintained (bumped on spec changes). */
  hasGeneration: boolean;
  /** PUT on a missing object creates it (true for Services, false for most kinds). */
  allowCreateOnUpdate: boolean;
  /** DELETE answers with the deleted object (Services) rather than a Success Status. */
  returnsDeletedObject?: boolean;
  /** How metadata.name is validated (`path-segment`: RBAC's, anything a URL segment can hold). */
  nameFormat:
    | 'dns1123-label'
    | 'dns1123-subdomain'
    | 'dns1035-label'
    | 'path-segment';
  /** The kind has no `/status` subresource (ConfigMaps, RBAC): absent from discovery, 404. */
  noStatus?: boolean;
  /** The most characters a name may have, when less than its format allows (CronJobs: 52). */
  maxNameLength?: number;
  /** Defined by a CustomResourceDefinition that a cluster may not have installed. */
  crd?: string;
}

export function apiVersionOf(def: ResourceDef): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}
