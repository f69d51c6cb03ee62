import { NotFoundError } from '@backstage/errors';
import fs from 'node:fs';
import git from 'isomorphic-git';

/** A ref resolved to a commit, and the rest of the URL's segments as a path. */
export interface ResolvedRef {
  ref: string;
  commit: string;
  /** Seconds since the epoch, as Git records the committer's time. */
  committedAt: number;
  path: string;
}

/** A file of a commit's tree, read in full. */
export interface TreeFile {
  path: string;
  content: Buffer;
}

/** One repository's mirror, handed to the callback of {@link GitMirrors.withRepository}. */
export interface GitMirror {
  /** Splits `segments` into a ref (branch, tag or commit SHA) and a path, and resolves the ref. */
  resolve(segments: string[]): Promise<ResolvedRef>;
  /** The file at `filepath` in `commit`; NotFoundError when it is missing or a folder. */
  readFile(commit: string, filepath: string): Promise<Buffer>;
  /** Every file under the folder `filepath` of `commit`, with paths relative to it. */
  readFolder(commit: string, filepath: string): Promise<TreeFile[]>;
}

function isNamed(error: unknown, ...names: string[]): boolean {
  return names.includes((error as Error)?.name);
}

/** One repository's bare mirror, read with isomorphic-git. */
export class IsomorphicGitMirror implements GitMirror {
  /** isomorphic-git's cache of parsed pack indexes, for the reads of one request. */
  private readonly cache = {};

  private constructor(
    private readonly gitdir: string,
    private readonly cloneUrl: string,
  ) {}

  static open(gitdir: string, cloneUrl: string): IsomorphicGitMirror {
    return new IsomorphicGitMirror(gitdir, cloneUrl);
  }

  async resolve(segments: string[]): Promise<ResolvedRef> {
    const tries =
      segments.length === 0
        ? [['HEAD']]
        : segments.map((_, i) => segments.slice(0, i + 1));
    for (const refSegments of tries) {
      const ref = refSegments.join('/');
      const oid = await this.resolveOne(ref);
      if (oid === undefined) continue;
      try {
        const { oid: commit, commit: parsed } = await git.readCommit({
          fs,
          gitdir: this.gitdir,
          oid,
          cache: this.cache,
        });
        return {
          ref,
          commit,
          committedAt: parsed.committer.timestamp,
          path: segments.slice(refSegments.length).join('/'),
        };
      } catch (error) {
        if (!isNamed(error, 'ObjectTypeError', 'NotFoundError')) throw error;
      }
    }
    throw new NotFoundError(
      `No branch, tag or commit of ${this.cloneUrl} matches '${
        segments.join('/') || 'HEAD'
      }'`,
    );
  }

  async readFile(commit: string, filepath: string): Promise<Buffer> {
    try {
      const { blob } = await git.readBlob({
        fs,
        gitdir: this.gitdir,
        oid: commit,
        filepath,
        cache: this.cache,
      });
      return Buffer.from(blob);
    } catch (error) {
      if (!isNamed(error, 'NotFoundError', 'ObjectTypeError')) throw error;
      throw this.notFound(commit, filepath, 'file');
    }
  }

  async readFolder(commit: string, filepath: string): Promise<TreeFile[]> {
    let root: string;
    try {
      const tree = await git.readTree({
        fs,
        gitdir: this.gitdir,
        oid: commit,
        filepath,
        cache: this.cache,
      });
      root = tree.oid;
    } catch (error) {
      if (!isNamed(error, 'NotFoundError', 'ObjectTypeError')) throw error;
      throw this.notFound(commit, filepath, 'folder');
    }
    const files: TreeFile[] = [];
    await this.collect(root, '', files);
    return files;
  }

  /** Adds every file under the tree `oid` to `files`; submodules are left out. */
  private async collect(oid: string, prefix: string, files: TreeFile[]) {
    const { gitdir, cache } = this;
    const { tree } = await git.readTree({ fs, gitdir, oid, cache });
    for (const entry of tree) {
      const name = prefix ? `${prefix}/${entry.path}` : entry.path;
      if (entry.type === 'tree') await this.collect(entry.oid, name, files);
      if (entry.type === 'blob') {
        const { blob } = await git.readBlob({
          fs,
          gitdir,
          oid: entry.oid,
          cache,
        });
        files.push({ path: name, content: Buffer.from(blob) });
      }
    }
  }

  /** A branch, then a tag, then an (abbreviated) object id; undefined when none matches. */
  private async resolveOne(ref: string): Promise<string | undefined> {
    const { gitdir, cache } = this;
    for (const candidate of [
      `refs/remotes/origin/${ref}`,
      `refs/tags/${ref}`,
    ]) {
      try {
        return await git.resolveRef({ fs, gitdir, ref: candidate });
      } catch (error) {
        if (!isNamed(error, 'NotFoundError')) throw error;
      }
    }
    if (!/^[0-9a-f]{4,40}$/i.test(ref)) return undefined;
    try {
      return await git.expandOid({ fs, gitdir, oid: ref.toLowerCase(), cache });
    } catch (error) {
      if (isNamed(error, 'NotFoundError', 'AmbiguousError')) return undefined;
      throw error;
    }
  }

  private notFound(commit: string, filepath: string, what: string) {
    return new NotFoundError(
      `${this.cloneUrl} has no ${what} '${filepath}' at commit ${commit}`,
    );
  }
}
