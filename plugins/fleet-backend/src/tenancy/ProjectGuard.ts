import { NotAllowedError, ServiceUnavailableError } from '@backstage/errors';
import type {
  ApplicationPlacement,
  ApplicationSpec,
  EnvMap,
} from '@cnp/plugin-fleet-common';
import { matchesSelector } from '../kubernetes/labelSelector';
import { sanitizeK8sName } from '../kubernetes/sanitizeK8sName';
import { objectsRefusal } from './manifestRules';
import { expand, hostRefusal, matchesPattern, sourceRefusal } from './patterns';
import { SYSTEM_NAMESPACES, type FleetProject } from './projects';

/**
 * A component's owner in the catalog and the group its `cnp.io/deployers` annotation names (full,
 * lower-case entity refs); neither when the catalog does not know it.
 */
export type EntityOwnerReader = (
  entityRef: string,
  options?: {
    /** Read the catalog now rather than reuse a recent read (a caller's request). */
    fresh?: boolean;
  },
) => Promise<{ owner?: string; deployers?: string }>;

/** A cluster as a project sees it. */
export type ProjectCluster = { name: string; labels: Record<string, string> };

/** An object of a component's own manifests, as the project rules look at it. */
export interface ManifestObject {
  /** Its API group decides which kind it is (see `projectKindOf`). */
  apiVersion?: string;
  kind?: string;
  /** Its name and namespace; a Pod's annotations are read for its AppArmor profiles. */
  metadata?: { name?: string; namespace?: string };
  /**
   * Read for an Ingress's hosts and Secrets, and for the pod templates: what pods read
   * (Secrets, ConfigMaps) and how they run (the project's pod security).
   */
  spec?: unknown;
}

/** What a write would set, as the project rules look at it. */
export interface ProjectWrite {
  /** The application's Kubernetes name (`{app}` in patterns). */
  appName: string;
  spec?: Pick<ApplicationSpec, 'namespace' | 'env' | 'ingress'>;
  placement?: Pick<ApplicationPlacement, 'overrides'>;
  /** Environment set by a release. */
  env?: EnvMap;
}

/**
 * Decides what a component's writes may touch, by the project its owner belongs to: a request
 * outside the project is a 403 naming the project and the rule (`namespace 'argocd' is not in
 * project payments`), thrown before anything is written.
 */
export class ProjectGuard {
  static create(options: {
    projects: FleetProject[];
    /** Read only when projects are configured: the built-in project holds every component. */
    ownerOf: EntityOwnerReader;
    /** Where an application goes when its spec names no namespace (`fleet.deploy.namespace`). */
    deployNamespace: string;
    /** Namespaces no application may name besides the system ones. */
    forbiddenNamespaces?: string[];
  }): ProjectGuard {
    return new ProjectGuard(
      options.projects,
      options.ownerOf,
      options.deployNamespace,
      new Set([...SYSTEM_NAMESPACES, ...(options.forbiddenNamespaces ?? [])]),
    );
  }

  private constructor(
    private readonly projects: FleetProject[],
    private readonly ownerOf: EntityOwnerReader,
    readonly deployNamespace: string,
    private readonly forbidden: Set<string>,
  ) {}

  /**
   * The project of a component: the first whose owners hold the component's owner. A component
   * whose `cnp.io/deployers` names a group outside that project's owners belongs to none: the
   * component's own catalog entry names both its owner and that group, so otherwise a member of
   * a deployer group could put a component of its own in another team's project (by naming
   * that team as its owner) and deploy into that project's namespaces and Secrets.
   */
  async projectOf(
    entityRef: string,
    options?: { fresh?: boolean },
  ): Promise<FleetProject> {
    const builtIn = this.projects.find(p => p.builtIn);
    if (builtIn) return builtIn;
    let owner: string | undefined;
    let deployers: string | undefined;
    try {
      ({ owner, deployers } = await this.ownerOf(entityRef, options));
    } catch (error) {
      // Not the caller's doing: a 503, and nobody is let into a project on an outage.
      throw new ServiceUnavailableError(
        `The catalog could not be read to find the project of ${entityRef}; try again shortly`,
        error as Error,
      );
    }
    const project = owner
      ? this.projects.find(p => p.owners.includes(owner))
      : undefined;
    if (!project) {
      throw new NotAllowedError(
        `${entityRef} belongs to no Fleet project: ${
          owner
            ? `its owner ${owner} is`
            : 'it has no owner in the catalog, and'
        } not among the owners of any project in fleet.projects`,
      );
    }
    if (deployers !== undefined && !project.owners.includes(deployers)) {
      throw new NotAllowedError(
        `${entityRef} names ${deployers} in its cnp.io/deployers annotation, which is not among the owners of its project ${
          project.name
        } (${project.owners.join(
          ', ',
        )}): a component may open its deploys only to a group of its own project`,
      );
    }
    return project;
  }

  /**
   * Checks the namespace the application deploys to (its spec's, else the deploy namespace), its
   * env references, its Ingress and its placement overrides: 403 on the first rule broken. The
   * catalog is read afresh: a caller's request is decided on the component's owner and
   * deployers as the permission policy sees them now, not as they were some seconds ago (the
   * later checks of the same request reuse this read).
   */
  async checkWrite(
    entityRef: string,
    write: ProjectWrite,
  ): Promise<FleetProject> {
    const project = await this.projectOf(entityRef, { fresh: true });
    const refusal = this.writeRefusal(project, write);
    if (refusal) throw new NotAllowedError(refusal);
    return project;
  }

  /** The namespace the application's objects go to. */
  /** Whether Fleet never deploys to `namespace` (a system namespace). */
  isForbiddenNamespace(namespace: string): boolean {
    return this.forbidden.has(namespace);
  }

  namespaceOf(spec: ProjectWrite['spec']): string {
    return spec?.namespace ?? this.deployNamespace;
  }

  /** The namespace Fleet deploys the application to when its spec names none. */
  namespaceRefusal(
    project: FleetProject,
    namespace: string,
    appName: string,
  ): string | undefined {
    if (this.forbidden.has(namespace)) {
      return `namespace '${namespace}' is a system namespace Fleet does not deploy to`;
    }
    if (
      !project.namespaces.some(p =>
        matchesPattern(namespace, expand(p, appName)),
      )
    ) {
      return `namespace '${namespace}' is not in project ${
        project.name
      } (its namespaces: ${project.namespaces.join(', ')})`;
    }
    return undefined;
  }

  /**
   * Whether Fleet may create the namespace an application goes to: only one its project names
   * exactly (not through a pattern), and never when the project cannot be read.
   */
  async mayCreateNamespace(request: {
    entityRef: string;
    appName: string;
    namespace: string;
  }): Promise<boolean> {
    let project: FleetProject;
    try {
      project = await this.projectOf(request.entityRef);
    } catch {
      return false;
    }
    return (
      !this.forbidden.has(request.namespace) &&
      project.namespaces.some(
        p =>
          !p.includes('*') && expand(p, request.appName) === request.namespace,
      )
    );
  }

  secretRefusal(
    project: FleetProject,
    what: string,
    name: string,
    appName: string,
  ): string | undefined {
    if (project.secrets.some(p => matchesPattern(name, expand(p, appName)))) {
      return undefined;
    }
    return `${what} '${name}' is not in project ${
      project.name
    } (its secrets: ${project.secrets
      .map(p => expand(p, appName))
      .join(', ')})`;
  }

  private envRefusal(
    project: FleetProject,
    env: EnvMap | undefined,
    appName: string,
  ): string | undefined {
    for (const [variable, value] of Object.entries(env ?? {})) {
      if (typeof value === 'string' || !value?.valueFrom) continue;
      const from = value.valueFrom;
      const ref =
        'secretKeyRef' in from
          ? { what: 'Secret', name: from.secretKeyRef.name }
          : { what: 'ConfigMap', name: from.configMapKeyRef.name };
      const refusal = this.secretRefusal(
        project,
        `${ref.what} of ${variable}:`,
        ref.name,
        appName,
      );
      if (refusal) return refusal;
    }
    return undefined;
  }

  /** See `objectsRefusal` (manifestRules.ts). */
  objectsRefusal(
    project: FleetProject,
    objects: readonly ManifestObject[],
    appName: string,
  ): string | undefined {
    return objectsRefusal(this, project, objects, appName);
  }

  /** Why the component's project refuses to read manifests from `url` (see `sourceRefusal`). */
  async sourceRefusalOf(request: {
    entityRef: string;
    appName: string;
    url: string;
  }): Promise<string | undefined> {
    const project = await this.projectOf(request.entityRef);
    return sourceRefusal(project, request.url, request.appName);
  }

  /**
   * Why the component's project refuses the objects (see `objectsRefusal`), or the place they
   * were read from (`sourceUrl`: see `sourceRefusal`), or undefined.
   */
  async objectsRefusalOf(request: {
    entityRef: string;
    appName: string;
    objects: readonly ManifestObject[];
    sourceUrl?: string;
  }): Promise<string | undefined> {
    const project = await this.projectOf(request.entityRef);
    return (
      (request.sourceUrl !== undefined
        ? sourceRefusal(project, request.sourceUrl, request.appName)
        : undefined) ??
      this.objectsRefusal(project, request.objects, request.appName)
    );
  }

  /** The first rule a write breaks, in words, or undefined. */
  writeRefusal(project: FleetProject, write: ProjectWrite): string | undefined {
    const { appName, spec } = write;
    const namespaceRefusal = this.namespaceRefusal(
      project,
      this.namespaceOf(spec),
      appName,
    );
    if (namespaceRefusal) return namespaceRefusal;
    const envs = [
      spec?.env,
      write.env,
      ...(write.placement?.overrides ?? []).map(o => o.env),
    ];
    for (const env of envs) {
      const refusal = this.envRefusal(project, env, appName);
      if (refusal) return refusal;
    }
    const ingress = spec?.ingress;
    if (ingress) {
      const refusedHost = hostRefusal(project, ingress.host);
      if (refusedHost) return refusedHost;
      if (ingress.tls) {
        // `tls: true` reads the certificate of `<app>-tls`: a Secret all the same.
        const refusal = this.secretRefusal(
          project,
          'TLS Secret',
          typeof ingress.tls === 'object'
            ? ingress.tls.secretName
            : sanitizeK8sName(`${appName}-tls`),
          appName,
        );
        if (refusal) return refusal;
      }
    }
    return undefined;
  }

  /** Why the project may not use the cluster, or undefined when it may. */
  clusterRefusal(
    project: FleetProject,
    cluster: ProjectCluster,
  ): string | undefined {
    const rule = project.clusters;
    if (!rule) return undefined;
    if (rule.names?.includes(cluster.name)) return undefined;
    if (rule.selector && matchesSelector(cluster.labels, rule.selector)) {
      return undefined;
    }
    const said = [
      rule.names?.length ? `names: ${rule.names.join(', ')}` : undefined,
      rule.text ? `selector: ${rule.text}` : undefined,
    ].filter(Boolean);
    return `cluster '${cluster.name}' is not in project ${project.name}${
      said.length ? ` (its clusters: ${said.join('; ')})` : ''
    }`;
  }

  /**
   * Why an earlier revision (its namespace and env, recorded maybe before the project existed or
   * under another owner) may not be applied again by a rollback; undefined when it may. Throws
   * when the project cannot be read.
   */
  async revisionRefusal(request: {
    entityRef: string;
    appName: string;
    namespace?: string;
    env?: EnvMap;
  }): Promise<string | undefined> {
    const project = await this.projectOf(request.entityRef);
    const refusal = this.writeRefusal(project, {
      appName: request.appName,
      spec: { namespace: request.namespace, env: request.env },
    });
    return refusal && `revision refused: ${refusal}`;
  }

  /**
   * Why the reconcile may not place the application on the cluster: the cluster is outside its
   * project, or its stored spec (namespace, env references, Ingress) is, after the project was
   * narrowed or the component changed owner. Undefined when it may. Throws when the project
   * cannot be read (a catalog outage is no refusal: the placement is left as it was).
   */
  async placementRefusal(
    application: {
      entityRef: string;
      name: string;
      spec: ProjectWrite['spec'];
    },
    cluster: ProjectCluster,
  ): Promise<string | undefined> {
    const project = await this.projectOf(application.entityRef);
    return (
      this.clusterRefusal(project, cluster) ??
      this.writeRefusal(project, {
        appName: application.name,
        spec: application.spec,
      })
    );
  }

  /** Checks that every cluster is the component's project's; 403 on the first that is not. */
  async checkClusters(
    entityRef: string,
    clusters: ProjectCluster[],
  ): Promise<FleetProject> {
    const project = await this.projectOf(entityRef);
    for (const cluster of clusters) {
      const refusal = this.clusterRefusal(project, cluster);
      if (refusal) throw new NotAllowedError(refusal);
    }
    return project;
  }
}

export { matchesPattern } from './patterns';
