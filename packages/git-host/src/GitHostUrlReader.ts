import {
  ReaderFactory,
  ReadTreeResponseFactory,
  ReadUrlResponseFactory,
} from '@backstage/backend-defaults/urlReader';
import {
  UrlReaderService,
  UrlReaderServiceReadTreeOptions,
  UrlReaderServiceReadTreeResponse,
  UrlReaderServiceReadUrlOptions,
  UrlReaderServiceReadUrlResponse,
  UrlReaderServiceSearchResponse,
} from '@backstage/backend-plugin-api';
import { NotImplementedError, NotModifiedError } from '@backstage/errors';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { GitMirrors } from './GitMirrors';
import {
  isUnderBaseUrl,
  normalizeBaseUrl,
  parseGitHostUrl,
} from './parseGitHostUrl';

/** Options of {@link GitHostUrlReader.create} and {@link createGitHostReaderFactory}. */
export interface GitHostUrlReaderOptions {
  /** The Git host's base URL; repositories clone from `<baseUrl>/<name>.git`. */
  baseUrl: string;
  /**
   * Where the bare mirrors of the repositories are kept, one folder per
   * repository; `<os temp dir>/cnp-git-host-cache` unless told.
   */
  cacheDir?: string;
}

/** The config key the reader factory reads its options from. */
export const GIT_HOST_CONFIG_KEY = 'fleet.gitHost';

/**
 * A `UrlReaderService` for a Git host that speaks Git's smart HTTP protocol,
 * with URLs `<base>/<repository>.git/blob/<ref>/<path>` (a file) and
 * `<base>/<repository>.git/tree/<ref>/<path>` (a folder). `<ref>` is a
 * branch, a tag or a commit SHA. Each read fetches the repository into a
 * local mirror with isomorphic-git, resolves the ref to its commit and
 * answers with the commit's SHA as the etag.
 */
export class GitHostUrlReader implements UrlReaderService {
  private constructor(
    private readonly baseUrl: string,
    private readonly mirrors: GitMirrors,
    private readonly treeResponseFactory: ReadTreeResponseFactory,
  ) {}

  static create(
    options: GitHostUrlReaderOptions & {
      treeResponseFactory: ReadTreeResponseFactory;
    },
  ): GitHostUrlReader {
    const cacheDir =
      options.cacheDir ?? path.join(os.tmpdir(), 'cnp-git-host-cache');
    return new GitHostUrlReader(
      normalizeBaseUrl(options.baseUrl),
      GitMirrors.create({ cacheDir }),
      options.treeResponseFactory,
    );
  }

  /** True for the URLs this reader answers: those under its base URL. */
  handles(url: URL): boolean {
    return isUnderBaseUrl(url, this.baseUrl);
  }

  async readUrl(
    url: string,
    options?: UrlReaderServiceReadUrlOptions,
  ): Promise<UrlReaderServiceReadUrlResponse> {
    const target = parseGitHostUrl(url, this.baseUrl);
    const { commit, committedAt, content } = await this.mirrors.withRepository(
      target.cloneUrl,
      async mirror => {
        const resolved = await mirror.resolve(target.refAndPath);
        if (options?.etag === resolved.commit) {
          return { ...resolved, content: undefined };
        }
        const file = await mirror.readFile(resolved.commit, resolved.path);
        return { ...resolved, content: file };
      },
    );
    if (content === undefined) {
      throw new NotModifiedError(`${url} is unchanged at commit ${commit}`);
    }
    return ReadUrlResponseFactory.fromReadable(Readable.from([content]), {
      etag: commit,
      lastModifiedAt: new Date(committedAt * 1000),
    });
  }

  async readTree(
    url: string,
    options?: UrlReaderServiceReadTreeOptions,
  ): Promise<UrlReaderServiceReadTreeResponse> {
    const target = parseGitHostUrl(url, this.baseUrl);
    const { commit, committedAt, files } = await this.mirrors.withRepository(
      target.cloneUrl,
      async mirror => {
        const resolved = await mirror.resolve(target.refAndPath);
        if (options?.etag === resolved.commit) {
          return { ...resolved, files: undefined };
        }
        const all = await mirror.readFolder(resolved.commit, resolved.path);
        return { ...resolved, files: all };
      },
    );
    if (files === undefined) {
      throw new NotModifiedError(`${url} is unchanged at commit ${commit}`);
    }
    const lastModifiedAt = new Date(committedAt * 1000);
    const response = await this.treeResponseFactory.fromReadableArray(
      files
        .filter(
          file =>
            !options?.filter ||
            options.filter(file.path, { size: file.content.length }),
        )
        .map(file => ({
          path: file.path,
          data: Readable.from([file.content]),
          lastModifiedAt,
        })),
    );
    // The array response carries no etag of its own; the commit is the version.
    return {
      files: () => response.files(),
      archive: () => response.archive(),
      dir: dirOptions => response.dir(dirOptions),
      etag: commit,
    };
  }

  async search(url: string): Promise<UrlReaderServiceSearchResponse> {
    throw new NotImplementedError(
      `The Git host reader cannot search (${url}); read a folder with readTree`,
    );
  }

  toString(): string {
    return `gitHost{baseUrl=${this.baseUrl}}`;
  }
}

/**
 * A Backstage `ReaderFactory` for {@link GitHostUrlReader}. With `options`
 * it serves that base URL; without, it reads `fleet.gitHost.baseUrl` (and the
 * optional `fleet.gitHost.cacheDir`) from the config and makes no reader
 * when the key is absent.
 */
export function createGitHostReaderFactory(
  options?: GitHostUrlReaderOptions,
): ReaderFactory {
  return ({ config, treeResponseFactory }) => {
    const section = config.getOptionalConfig(GIT_HOST_CONFIG_KEY);
    const baseUrl = options?.baseUrl ?? section?.getOptionalString('baseUrl');
    if (!baseUrl) return [];
    const reader = GitHostUrlReader.create({
      baseUrl,
      cacheDir: options?.cacheDir ?? section?.getOptionalString('cacheDir'),
      treeResponseFactory,
    });
    return [{ predicate: url => reader.handles(url), reader }];
  };
}
