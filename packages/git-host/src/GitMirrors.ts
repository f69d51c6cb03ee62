import { ForwardedError, NotFoundError } from '@backstage/errors';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import { GitMirror, IsomorphicGitMirror } from './GitMirror';

/**
 * Bare mirrors of remote repositories, made and updated with isomorphic-git
 * over HTTP: one folder per clone URL under `cacheDir`, kept between reads
 * and fetched again on each one, so new commits and moved branches are seen.
 * Work on one repository is serialized within this process.
 */
export class GitMirrors {
  private readonly queues = new Map<string, Promise<unknown>>();

  private constructor(private readonly cacheDir: string) {}

  static create(options: { cacheDir: string }): GitMirrors {
    return new GitMirrors(path.resolve(options.cacheDir));
  }

  /** Fetches `cloneUrl` into its mirror, then runs `work` on it, one at a time per repository. */
  withRepository<T>(
    cloneUrl: string,
    work: (mirror: GitMirror) => Promise<T>,
  ): Promise<T> {
    const previous = this.queues.get(cloneUrl) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(async () => {
        const gitdir = await this.update(cloneUrl);
        return work(IsomorphicGitMirror.open(gitdir, cloneUrl));
      });
    const settled = next.catch(() => undefined);
    this.queues.set(cloneUrl, settled);
    settled.then(() => {
      if (this.queues.get(cloneUrl) === settled) this.queues.delete(cloneUrl);
    });
    return next;
  }

  private async update(cloneUrl: string): Promise<string> {
    const digest = crypto.createHash('sha256').update(cloneUrl).digest('hex');
    const gitdir = path.join(this.cacheDir, digest.slice(0, 16));
    if (!fs.existsSync(path.join(gitdir, 'config'))) {
      await fs.promises.mkdir(gitdir, { recursive: true });
      await git.init({ fs, gitdir, bare: true });
      await git.addRemote({
        fs,
        gitdir,
        remote: 'origin',
        url: cloneUrl,
        force: true,
      });
    }
    try {
      await git.fetch({
        fs,
        http,
        gitdir,
        remote: 'origin',
        tags: true,
        prune: true,
        pruneTags: true,
        singleBranch: false,
      });
    } catch (error) {
      if (
        (error as { data?: { statusCode?: number } }).data?.statusCode === 404
      ) {
        throw new NotFoundError(`Git repository ${cloneUrl} was not found`);
      }
      throw new ForwardedError(
        `Could not fetch the Git repository ${cloneUrl}`,
        error,
      );
    }
    return gitdir;
  }
}
