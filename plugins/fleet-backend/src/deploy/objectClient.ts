import {
  ApiException,
  HttpMethod,
  KubernetesObjectApi,
  type ConfigurationOptions,
  type KubeConfig,
  type KubernetesObject,
  type ResponseContext,
  type V1APIResourceList,
  type V1DeleteOptions,
} from '@kubernetes/client-node';
import { isKubeStatus } from '../kubernetes/requestOptions';

/** A kind the cluster's API discovery does not list: its group, its version or the kind itself. */
export class UnservedKindError extends Error {
  constructor(readonly apiVersion: string, readonly kind: string) {
    super(
      `the cluster does not serve ${kind} (${apiVersion}): its API discovery lists no such kind (is its CRD installed?)`,
    );
    this.name = 'UnservedKindError';
  }
}

/** The discovery answers of one cluster, by apiVersion: shared by all its clients. */
export type DiscoveryCache = Record<string, V1APIResourceList>;

/** The query parameters of a write. */
export interface WriteQuery {
  fieldManager?: string;
  fieldValidation?: string;
  force?: boolean;
  /** `All`: the server checks and answers the write without storing it. */
  dryRun?: 'All';
}

/** The response type that makes `processResponse` answer the JSON as the server sent it. */
const RAW = 'fleet:raw-json';

/**
 * Reads and writes objects of any kind, the kind's path found by API discovery (client-node's
 * `KubernetesObjectApi`). Objects go and come as the server's JSON, never through client-node's
 * typed models, which drop the fields they do not know (a misspelt field then never reaches the
 * server's strict validation) and turn timestamps into Dates. One client serves one call's
 * options (the cluster's pooled agent, the timeout, the patch's content type): build one per
 * call with `ObjectClient.for`; the discovery cache is the cluster's.
 */
export class ObjectClient extends KubernetesObjectApi {
  static for(
    kc: KubeConfig,
    options: ConfigurationOptions,
    discovery: DiscoveryCache,
  ): ObjectClient {
    const client = kc.makeApiClient(ObjectClient);
    client.configuration = {
      ...client.configuration,
      middleware: [...((options.middleware ?? []) as never[])],
    };
    client.apiVersionResourceCache = discovery;
    return client;
  }

  /** Whether the kind's objects live in a namespace; `UnservedKindError` when none is served. */
  async scopeOf(
    apiVersion: string,
    kind: string,
  ): Promise<{ namespaced: boolean }> {
    let resource;
    try {
      resource = await this.resource(apiVersion, kind);
    } catch (error) {
      // 404: the cluster serves no such group or version.
      if (isKubeStatus(error, 404))
        throw new UnservedKindError(apiVersion, kind);
      throw error;
    }
    if (!resource) throw new UnservedKindError(apiVersion, kind);
    return { namespaced: resource.namespaced };
  }

  /** The live object, or undefined when there is none (404). */
  async readIfThere(
    object: KubernetesObject,
  ): Promise<KubernetesObject | undefined> {
    try {
      return await this.send<KubernetesObject>(HttpMethod.GET, object, 'read');
    } catch (error) {
      if (isKubeStatus(error, 404)) return undefined;
      throw error;
    }
  }

  /** The live object; a 404 rejects as any other answer. */
  readObject(object: KubernetesObject): Promise<KubernetesObject> {
    return this.send(HttpMethod.GET, object, 'read');
  }

  createObject(
    body: KubernetesObject,
    query: WriteQuery,
  ): Promise<KubernetesObject> {
    return this.send(HttpMethod.POST, body, 'create', { query, body });
  }

  /**
   * Patches the object `object` names with `body`: a server-side apply unless the call's
   * options set another `Content-Type` (`setHeaderOptions`).
   */
  patchObject(
    object: KubernetesObject,
    body: unknown,
    query: WriteQuery,
  ): Promise<KubernetesObject> {
    return this.send(HttpMethod.PATCH, object, 'patch', {
      query,
      body,
      contentType: 'application/apply-patch+yaml',
    });
  }

  deleteObject(
    object: KubernetesObject,
    options: V1DeleteOptions,
  ): Promise<unknown> {
    return this.send(HttpMethod.DELETE, object, 'delete', { body: options });
  }

  private async send<T>(
    method: HttpMethod,
    object: KubernetesObject,
    action: 'read' | 'create' | 'patch' | 'delete',
    request: { query?: WriteQuery; body?: unknown; contentType?: string } = {},
  ): Promise<T> {
    const apiVersion = object.apiVersion ?? '';
    const kind = object.kind ?? '';
    const { namespaced } = await this.scopeOf(apiVersion, kind);
    const namespace = object.metadata?.namespace;
    if (namespaced && !namespace) {
      // client-node would send it to the context's default namespace.
      throw new Error(
        `${kind} ${object.metadata?.name} is namespaced and names no metadata.namespace`,
      );
    }
    const path = await this.specUriPath(
      {
        apiVersion,
        kind,
        metadata: { name: object.metadata?.name, namespace },
      },
      action,
    );
    const context = this.configuration.baseServer.makeRequestContext(
      path,
      method,
    );
    context.setHeaderParam('Accept', 'application/json');
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) context.setQueryParam(key, String(value));
    }
    if (request.body !== undefined) {
      context.setHeaderParam(
        'Content-Type',
        request.contentType ?? 'application/json',
      );
      context.setBody(JSON.stringify(request.body));
    }
    return this.requestPromise(context, RAW) as Promise<T>;
  }

  protected override async processResponse<T extends KubernetesObject>(
    response: ResponseContext,
    type?: string,
  ): Promise<T> {
    if (type !== RAW) return super.processResponse<T>(response, type);
    const text = await response.body.text();
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299)
      return JSON.parse(text) as T;
    // As client-node's typed calls reject: the status in `code`, the answer's text in `body`.
    throw new ApiException(
      response.httpStatusCode,
      'Unsuccessful HTTP Request',
      text,
      response.headers,
    );
  }
}
