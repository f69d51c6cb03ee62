import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** Options of {@link createExampleRepository}. */
export interface CreateExampleRepositoryOptions {
  /** The folder of bare repositories, as served by `serveGitRepositories`. */
  root: string;
  /** The repository name; the bare repository is `<root>/<name>.git`. */
  name: string;
  /**
   * Files to write, by path relative to the repository root (`deploy/app.yaml`).
   * They are laid over the branch's current files; `null` deletes a file.
   */
  files: Record<string, string | null>;
  /** The commit message. */
  message: string;
  /** An annotated tag to put on the new commit, e.g. `v1`. */
  tag?: string;
  /** The branch to commit on, `main` unless told; a new branch starts from the default branch. */
  branch?: string;
}

const execFileAsync = promisify(execFile);

/**
 * Git with a fixed identity and no user or system configuration, so that it
 * runs the same on a laptop and on CI where no `user.name` is set.
 */
async function git(args: string[], cwd: string): Promise<string> {
  const identity = {
    name: 'Fleet Example',
    email: 'fleet-example@example.com',
  };
  const { stdout } = await execFileAsync('git', args, {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: identity.name,
      GIT_AUTHOR_EMAIL: identity.email,
      GIT_COMMITTER_NAME: identity.name,
      GIT_COMMITTER_EMAIL: identity.email,
    },
  });
  return stdout.trim();
}

function checkedPath(file: string): string {
  const normalized = path.posix.normalize(file);
  if (
    normalized.startsWith('../') ||
    normalized === '..' ||
    path.posix.isAbsolute(normalized) ||
    normalized.split('/').includes('.git')
  ) {
    throw new Error(`File path must stay inside the repository: ${file}`);
  }
  return normalized;
}

/**
 * Commits `files` to a branch of the bare repository `<root>/<name>.git`,
 * creating the repository on first use, and returns the new commit's SHA.
 * Works through a temporary clone with the `git` command line and pushes back
 * over the local file transport; the clone is removed afterwards.
 */
export async function createExampleRepository(
  options: CreateExampleRepositoryOptions,
): Promise<string> {
  const branch = options.branch ?? 'main';
  const bare = path.resolve(options.root, `${options.name}.git`);
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'cnp-git-example-'));
  try {
    await fs.mkdir(bare, { recursive: true });
    try {
      await fs.access(path.join(bare, 'HEAD'));
    } catch {
      await git(
        ['init', '--quiet', '--bare', `--initial-branch=${branch}`],
        bare,
      );
    }
    const tree = path.join(work, 'tree');
    await git(['clone', '--quiet', bare, tree], work);
    const branches = await git(
      ['ls-remote', '--heads', 'origin', branch],
      tree,
    );
    await git(
      branches
        ? ['checkout', '--quiet', branch]
        : ['checkout', '--quiet', '-b', branch],
      tree,
    );
    for (const [file, content] of Object.entries(options.files)) {
      const target = path.join(tree, checkedPath(file));
      if (content === null) {
        await fs.rm(target, { force: true });
      } else {
        await fs.mkdir(path.dirname(target), { recursive: true });
        await fs.writeFile(target, content);
      }
    }
    await git(['add', '--all'], tree);
    await git(
      ['commit', '--quiet', '--allow-empty', '-m', options.message],
      tree,
    );
    const sha = await git(['rev-parse', 'HEAD'], tree);
    const refs = [`HEAD:refs/heads/${branch}`];
    if (options.tag) {
      await git(['tag', '-a', options.tag, '-m', options.tag], tree);
      refs.push(`refs/tags/${options.tag}`);
    }
    await git(['push', '--quiet', 'origin', ...refs], tree);
    return sha;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}
