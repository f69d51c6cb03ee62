import http from 'node:http';
import { AddressInfo } from 'node:net';
import { createGitRequestHandler } from './gitRequestHandler';

/** Options of {@link serveGitRepositories}. */
export interface ServeGitRepositoriesOptions {
  /** The folder holding the bare repositories, e.g. `<root>/inventory.git`. */
  root: string;
  /** The port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** The address to bind; `127.0.0.1` unless told. */
  host?: string;
  /** The CGI program to run; Git's own `git-http-backend` (from `git --exec-path`) unless told. */
  httpBackend?: string;
}

/** A running Git host, see {@link serveGitRepositories}. */
export interface GitRepositoryServer {
  /** The base URL, without a trailing slash: a repository clones from `<url>/<name>.git`. */
  url: string;
  /** Stops accepting connections and closes the open ones. */
  close(): Promise<void>;
}

/**
 * Serves every bare repository under `root` over Git's smart HTTP protocol
 * on a port of its own, answering as {@link createGitRequestHandler} does
 * (read-only: a push is refused with 403).
 */
export async function serveGitRepositories(
  options: ServeGitRepositoriesOptions,
): Promise<GitRepositoryServer> {
  const server = http.createServer(
    await createGitRequestHandler({
      root: options.root,
      httpBackend: options.httpBackend,
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host =
    address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close(error => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
