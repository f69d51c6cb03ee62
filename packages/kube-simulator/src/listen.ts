import type { Server } from 'node:net';

/**
 * Listens on 127.0.0.1 at `port` (0: any free port) and answers the port listened on; a failure
 * to listen (the port taken) rejects.
 */
export async function listenLocally(
  server: Server,
  port: number,
): Promise<number> {
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', fail);
      ok();
    });
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : port;
}
