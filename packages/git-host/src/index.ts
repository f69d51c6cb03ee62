/**
 * A Git host over Git's smart HTTP protocol and a Backstage URL reader for it.
 *
 * @packageDocumentation
 */

export { serveGitRepositories } from './serveGitRepositories';
export type {
  GitRepositoryServer,
  ServeGitRepositoriesOptions,
} from './serveGitRepositories';
export { createGitRequestHandler } from './gitRequestHandler';
export type {
  GitRequestHandler,
  GitRequestHandlerOptions,
} from './gitRequestHandler';
export { createExampleRepository } from './createExampleRepository';
export type { CreateExampleRepositoryOptions } from './createExampleRepository';
export { createInventoryRepository } from './createInventoryRepository';
export type {
  CreateInventoryRepositoryOptions,
  InventoryRepositoryCommits,
} from './createInventoryRepository';
export { GIT_HOST_SERVE_ROOT_CONFIG_KEY, gitHostPlugin } from './gitHostPlugin';
export {
  GIT_HOST_CONFIG_KEY,
  GitHostUrlReader,
  createGitHostReaderFactory,
} from './GitHostUrlReader';
export type { GitHostUrlReaderOptions } from './GitHostUrlReader';
export { gitHostUrlReaderFactory } from './gitHostUrlReaderFactory';
export { parseGitHostUrl } from './parseGitHostUrl';
export type { GitHostUrl } from './parseGitHostUrl';
