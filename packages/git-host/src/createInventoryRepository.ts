import { resolvePackagePath } from '@backstage/backend-plugin-api';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createExampleRepository } from './createExampleRepository';

/** Options of {@link createInventoryRepository}. */
export interface CreateInventoryRepositoryOptions {
  /** The folder of bare repositories; the repository is `<root>/inventory.git`. */
  root: string;
  /**
   * The folder holding `inventory/v1/` and `inventory/v2/`; this project's
   * `examples/repositories` unless told.
   */
  examplesDir?: string;
}

/** The commits of the two versions of the inventory repository. */
export interface InventoryRepositoryCommits {
  /** The commit of version 1: tag `v1`, branch `main`. */
  v1: string;
  /** The commit of version 2: tag `v2`, branch `next`, one commit on v1. */
  v2: string;
}

/** The files under `dir`, by path relative to it with `/` separators, sorted. */
async function filesUnder(dir: string): Promise<Record<string, string>> {
  const entries = await fs.readdir(dir, {
    recursive: true,
    withFileTypes: true,
  });
  const files = entries
    .filter(entry => entry.isFile())
    .map(entry => path.join(entry.parentPath, entry.name))
    .sort();
  const contents = await Promise.all(
    files.map(file => fs.readFile(file, 'utf8')),
  );
  return Object.fromEntries(
    files.map((file, i) => [
      path.relative(dir, file).split(path.sep).join('/'),
      contents[i],
    ]),
  );
}

async function versionFiles(dir: string): Promise<Record<string, string>> {
  try {
    await fs.access(dir);
  } catch {
    throw new Error(`The example repository version ${dir} does not exist`);
  }
  const files = await filesUnder(dir);
  if (Object.keys(files).length === 0) {
    throw new Error(`The example repository version ${dir} holds no files`);
  }
  return files;
}

/**
 * Builds the example repository `<root>/inventory.git` from the plain files
 * of `<examplesDir>/inventory/v1` and `.../v2`: version 1 is committed on
 * `main` and tagged `v1`, then version 2 is committed on a branch `next`
 * started from it (the files v2 lacks are deleted) and tagged `v2`, so `main`
 * stays at v1. Throws when the repository already exists, so that a second
 * run never stacks commits on the first.
 */
export async function createInventoryRepository(
  options: CreateInventoryRepositoryOptions,
): Promise<InventoryRepositoryCommits> {
  const examplesDir =
    options.examplesDir ??
    resolvePackagePath('@cnp/git-host', '..', '..', 'examples', 'repositories');
  const bare = path.resolve(options.root, 'inventory.git');
  const exists = await fs.access(bare).then(
    () => true,
    () => false,
  );
  if (exists) {
    throw new Error(
      `The repository ${bare} already exists; remove it to build it again`,
    );
  }
  const first = await versionFiles(path.join(examplesDir, 'inventory', 'v1'));
  const second = await versionFiles(path.join(examplesDir, 'inventory', 'v2'));
  const v1 = await createExampleRepository({
    root: options.root,
    name: 'inventory',
    files: first,
    message: 'Inventory 2.0.0 with its config',
    tag: 'v1',
  });
  const deleted = Object.keys(first).filter(file => !(file in second));
  const v2 = await createExampleRepository({
    root: options.root,
    name: 'inventory',
    files: {
      ...second,
      ...Object.fromEntries(deleted.map(file => [file, null])),
    },
    message: 'Inventory 2.1.0: no ConfigMap, a migration Job',
    tag: 'v2',
    branch: 'next',
  });
  return { v1, v2 };
}
