import { constants as fsConstants, promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import { ConfigReader, type Config } from '@backstage/config';

const ROOTS_TTL_MS = 5_000;

/**
 * What a kubeconfigRef turns out to be when Fleet is about to use it.
 *
 * @public
 */
export type KubeconfigResolution =
  | { kind: 'file'; path: string; stat: Stats }
  | { kind: 'unusable'; reason: string };

/** A file that is there (or was named) but cannot be read, with the system's error code. */
function notReadable(ref: string, error: unknown): KubeconfigResolution {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return {
    kind: 'unusable',
    reason: `kubeconfig file '${ref}' is not readable${
      code ? ` (${code})` : ''
    }`,
  };
}

/**
 * Decides which kubeconfig files Fleet may open: an absolute path that resolves, after symlinks,
 * inside the allowed directories (the configured ones, the discovery directory, and the
 * discovery file). Anything else is an opaque reference (e.g. a Secret name) and is never opened.
 *
 * @public
 */
export class KubeconfigAccessPolicy {
  private constructor(
    private readonly roots: string[],
    private readonly files: string[],
  ) {}

  static create(options: {
    kubeconfigPath?: string;
    kubeconfigDir?: string;
    allowedKubeconfigDirs?: string[];
  }): KubeconfigAccessPolicy {
    const roots = [
      options.kubeconfigDir,
      ...(options.allowedKubeconfigDirs ?? []),
    ]
      .filter((d): d is string => !!d)
      .map(d => path.resolve(d));
    const files = options.kubeconfigPath
      ? [path.resolve(options.kubeconfigPath)]
      : [];
    return new KubeconfigAccessPolicy(roots, files);
  }

  /**
   * The policy of Fleet's configuration: `fleet.discovery.kubeconfigPath` (env `KUBECONFIG_PATH`
   * wins), `fleet.discovery.kubeconfigDir` (env `KUBECONFIG_DIR` wins) and
   * `fleet.discovery.allowedKubeconfigDirs`, as the Fleet backend reads them; for other backend
   * plugins that open a Fleet cluster's kubeconfig.
   */
  static fromConfig(
    config: Config,
    env: Record<string, string | undefined> = process.env,
  ): KubeconfigAccessPolicy {
    return KubeconfigAccessPolicy.create(
      KubeconfigAccessPolicy.locationsFromConfig(
        config.getOptionalConfig('fleet') ?? new ConfigReader({}),
        env,
      ),
    );
  }

  /**
   * The kubeconfig locations the `fleet` section of the configuration (`fleetConfig`) names:
   * `discovery.kubeconfigPath` (env `KUBECONFIG_PATH` wins), `discovery.kubeconfigDir` (env
   * `KUBECONFIG_DIR` wins) and `discovery.allowedKubeconfigDirs`, blank values left out.
   */
  static locationsFromConfig(
    fleetConfig: Config,
    env: Record<string, string | undefined> = process.env,
  ): {
    kubeconfigPath?: string;
    kubeconfigDir?: string;
    allowedKubeconfigDirs: string[];
  } {
    const nonEmpty = (value: string | undefined) =>
      value !== undefined && value.trim() !== '' ? value.trim() : undefined;
    return {
      kubeconfigPath:
        nonEmpty(env.KUBECONFIG_PATH) ??
        nonEmpty(fleetConfig.getOptionalString('discovery.kubeconfigPath')),
      kubeconfigDir:
        nonEmpty(env.KUBECONFIG_DIR) ??
        nonEmpty(fleetConfig.getOptionalString('discovery.kubeconfigDir')),
      allowedKubeconfigDirs:
        fleetConfig.getOptionalStringArray('discovery.allowedKubeconfigDirs') ??
        [],
    };
  }

  /** True when the reference looks like a file path rather than an opaque name. */
  static isPathReference(ref: string): boolean {
    return path.isAbsolute(ref);
  }

  private realRootsCache?: {
    at: number;
    value: Promise<{ roots: string[]; files: string[] }>;
  };

  /**
   * The allowed directories and files after symlinks, read again every few seconds (a health
   * cycle resolves every cluster's reference; the roots do not change within it).
   */
  private realRoots(): Promise<{ roots: string[]; files: string[] }> {
    const now = Date.now();
    if (this.realRootsCache && now - this.realRootsCache.at < ROOTS_TTL_MS)
      return this.realRootsCache.value;
    const real = async (p: string) => fs.realpath(p).catch(() => p);
    const value = (async () => ({
      roots: await Promise.all(this.roots.map(real)),
      files: await Promise.all(this.files.map(real)),
    }))();
    this.realRootsCache = { at: now, value };
    return value;
  }

  /** Is this absolute, symlink-free path inside the allowed directories (or an allowed file)? */
  private async isInside(realPath: string): Promise<boolean> {
    const { roots, files } = await this.realRoots();
    return (
      files.includes(realPath) ||
      roots.some(
        root =>
          realPath === root ||
          realPath.startsWith(root.endsWith(path.sep) ? root : root + path.sep),
      )
    );
  }

  /**
   * Resolves a reference to a readable file, or says why it cannot be used. The path is resolved
   * once, symlinks included, and the containment check and the open both use that one real path:
   * a symlink swapped in between cannot redirect Fleet outside the allowed directories.
   */
  async resolve(ref: string): Promise<KubeconfigResolution> {
    if (!KubeconfigAccessPolicy.isPathReference(ref)) {
      return {
        kind: 'unusable',
        reason: `kubeconfigRef '${ref}' is an opaque reference, not a kubeconfig file Fleet can read`,
      };
    }
    const outside: KubeconfigResolution = {
      kind: 'unusable',
      reason: `kubeconfigRef '${ref}' is outside the allowed kubeconfig directories`,
    };
    let real: string;
    try {
      real = await fs.realpath(ref);
    } catch (error) {
      if (!(await this.isInside(path.resolve(ref)))) return outside;
      return notReadable(ref, error);
    }
    if (!(await this.isInside(real))) return outside;
    try {
      await fs.access(real, fsConstants.R_OK);
      const stat = await fs.stat(real);
      if (!stat.isFile()) {
        return {
          kind: 'unusable',
          reason: `kubeconfigRef '${ref}' is not a file`,
        };
      }
      return { kind: 'file', path: real, stat };
    } catch (error) {
      return notReadable(ref, error);
    }
  }
}
