import { request as httpsRequest } from 'node:https';
import type { KubeSimulator } from '@cnp/kube-simulator';

/**
 * One request to a simulated API server, as a client would send it (bearer token, its CA): a
 * scenario's setup of what another team or tool put there. Answers the HTTP status.
 */
export function kubeRequest(
  sim: KubeSimulator,
  cluster: string,
  method: string,
  apiPath: string,
  body?: unknown,
): Promise<number> {
  return new Promise((done, fail) => {
    const req = httpsRequest(
      `${sim.endpoint(cluster)}${apiPath}`,
      {
        method,
        ca: sim.caPem,
        headers: {
          authorization: `Bearer ${sim.token(cluster)}`,
          'content-type': 'application/json',
        },
      },
      res => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      },
    );
    req.on('error', fail);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
