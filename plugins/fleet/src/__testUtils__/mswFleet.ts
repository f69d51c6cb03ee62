import { MockFetchApi } from '@backstage/test-utils';
import { HttpResponse } from 'msw';
import { FleetClient } from '../api';

/** Where the msw handlers of a test answer the Fleet API. */
export const fleetBase = 'http://fleet.test/api/fleet';

/** The real Fleet client, over the network msw answers in tests. */
export function mswFleetClient(): FleetClient {
  return new FleetClient({
    discoveryApi: {
      getBaseUrl: async (id: string) => `http://fleet.test/api/${id}`,
    },
    fetchApi: new MockFetchApi(),
  });
}

/** One request as a test checks it: the method, the path and the JSON body. */
export interface SeenRequest {
  method: string;
  path: string;
  body?: unknown;
}

/** Reads what a test checks of a request msw received. */
export async function seenRequest(request: Request): Promise<SeenRequest> {
  const text = await request.clone().text();
  return {
    method: request.method,
    path: new URL(request.url).pathname,
    ...(text ? { body: JSON.parse(text) } : {}),
  };
}

/** An error answer of the Fleet API, in the body its error handler writes. */
export function fleetError(name: string, message: string, status: number) {
  return HttpResponse.json(
    {
      error: { name, message },
      request: { method: 'POST', url: '/' },
      response: { statusCode: status },
    },
    { status },
  );
}
