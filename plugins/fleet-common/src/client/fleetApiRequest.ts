import type { paths } from '../schema/openapi/generated/types';

/**
 * A path of the Fleet HTTP API, as its OpenAPI spec writes it (`/clusters/{name}`).
 *
 * @public
 */
export type FleetApiPath = keyof paths;

/**
 * The methods the Fleet API serves on a path.
 *
 * @public
 */
export type FleetApiMethod<P extends FleetApiPath> = {
  [M in 'get' | 'post' | 'patch' | 'delete']: paths[P][M] extends {
    responses: unknown;
  }
    ? M
    : never;
}['get' | 'post' | 'patch' | 'delete'];

/**
 * One operation of the Fleet API, as the generated types describe it.
 *
 * @public
 */
export type FleetApiOperation<
  P extends FleetApiPath,
  M extends FleetApiMethod<P>,
> = paths[P][M];

/**
 * The JSON body of a request or response description, undefined when it has none.
 *
 * @public
 */
export type FleetApiJsonContent<T> = T extends {
  content: { 'application/json': infer B };
}
  ? B
  : undefined;

/**
 * The path parameters, query and body of one operation, typed by the spec.
 *
 * @public
 */
export type FleetApiRequestParts<
  P extends FleetApiPath,
  M extends FleetApiMethod<P>,
> = {
  path?: FleetApiOperation<P, M> extends { parameters: { path?: infer X } }
    ? Exclude<X, undefined>
    : never;
  query?: FleetApiOperation<P, M> extends { parameters: { query?: infer Q } }
    ? Exclude<Q, undefined>
    : never;
  body?: FleetApiOperation<P, M> extends { requestBody?: infer B }
    ? FleetApiJsonContent<Exclude<B, undefined>>
    : never;
  headers?: Record<string, string>;
};

/**
 * The body of an operation's successful answer (200, 201 or 202; undefined for 204), typed by
 * the spec.
 *
 * @public
 */
export type FleetApiAnswer<
  P extends FleetApiPath,
  M extends FleetApiMethod<P>,
> = FleetApiOperation<P, M> extends { responses: infer R }
  ? R extends { 200: infer A }
    ? FleetApiJsonContent<A>
    : R extends { 201: infer A }
    ? FleetApiJsonContent<A>
    : R extends { 202: infer A }
    ? FleetApiJsonContent<A>
    : undefined
  : never;

/**
 * Calls one operation of the Fleet API: the URL is the base URL of the `fleet` plugin, the path
 * with its parameters encoded, and the query without its undefined values; a body is sent as
 * JSON. The answer is the operation's typed response body, read from a 2xx response; any other
 * response is handed to `onError`, whose error is thrown. The request and response types come
 * from the Fleet OpenAPI spec (generated into this package), so a client built on this function
 * follows the spec as it changes.
 *
 * @public
 */
export async function fleetApiRequest<
  P extends FleetApiPath,
  M extends FleetApiMethod<P>,
>(options: {
  baseUrl: string;
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  method: M;
  path: P;
  parts?: FleetApiRequestParts<P, M>;
  onError: (response: Response) => Promise<Error>;
}): Promise<FleetApiAnswer<P, M>> {
  const parts = options.parts ?? {};
  const pathParams = (parts.path ?? {}) as Record<string, string>;
  const resolved = String(options.path).replace(/\{([^}]+)\}/g, (_, name) =>
    encodeURIComponent(pathParams[name]),
  );
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(
    (parts.query ?? {}) as Record<string, unknown>,
  )) {
    // An array is the parameter repeated (`?name=a&name=b`, the spec's form style).
    const values = Array.isArray(value) ? value : [value];
    for (const one of values) {
      if (one !== undefined && one !== '') query.append(key, String(one));
    }
  }
  const url = `${options.baseUrl}${resolved}${query.size ? `?${query}` : ''}`;
  const hasBody = parts.body !== undefined;
  const response = await options.fetch(url, {
    method: options.method.toUpperCase(),
    headers: {
      ...(hasBody ? { 'Content-Type': 'application/json' } : {}),
      ...parts.headers,
    },
    body: hasBody ? JSON.stringify(parts.body) : undefined,
  });
  if (!response.ok) throw await options.onError(response);
  if (response.status === 204) return undefined as FleetApiAnswer<P, M>;
  return (await response.json()) as FleetApiAnswer<P, M>;
}
