import type { UrlReaderService } from '@backstage/backend-plugin-api';
import {
  InputError,
  isError,
  ServiceUnavailableError,
} from '@backstage/errors';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { atVersion, isFileUrl } from './manifestsRef';

/** At most this many objects in one component's manifests (and in one revision's record). */
export const MAX_MANIFEST_OBJECTS = 500;
/** At most this many bytes of JSON for one component's manifests (and one revision's record). */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

/**
 * At most this many bytes of YAML files for one component's manifests: what a revision's bound
 * allows, with room for comments and layout.
 */
export const MAX_MANIFEST_FILE_BYTES = 4 * MAX_MANIFEST_BYTES;

/** How many alias expansions one YAML document may make (the `yaml` package's default). */
const MAX_ALIAS_COUNT = 100;

/** A component's manifests as read at one version. */
export interface ManifestSet {
  /** The URL read (at the version asked for). */
  url: string;
  /** The version asked for; undefined for the ref the URL names. */
  version?: string;
  /** The commit the reader resolved the version to (its etag), when it says. */
  commit?: string;
  /** The objects of every `.yaml`/`.yml` file, in path order, then document order. */
  objects: KubernetesObject[];
}

/**
 * Reads a component's own manifests through Backstage's `UrlReaderService`, so that the
 * adopter's integrations apply: a folder by `readTree` (its `.yaml` and `.yml` files), one file
 * by `readUrl`. Every YAML document must be one Kubernetes object (`apiVersion`, `kind`,
 * `metadata.name`); a `List` gives its items; empty documents are skipped.
 *
 * What the caller named wrongly (a version or folder that does not exist, a URL no integration
 * reads, a malformed document, files past {@link MAX_MANIFEST_FILE_BYTES} bytes, manifests past
 * {@link MAX_MANIFEST_OBJECTS} objects or {@link MAX_MANIFEST_BYTES} bytes) is an `InputError`;
 * a host that cannot be read is a `ServiceUnavailableError`.
 */
export class ManifestReader {
  constructor(private readonly reader: UrlReaderService) {}

  async read(url: string, version?: string): Promise<ManifestSet> {
    const target = atVersion(url, version);
    const files: Array<{ path: string; content: Buffer }> = [];
    let commit: string | undefined;
    try {
      if (isFileUrl(target)) {
        const response = await this.reader.readUrl(target);
        files.push({ path: target, content: await response.buffer() });
        commit = response.etag;
      } else {
        const response = await this.reader.readTree(target, {
          filter: path => /\.ya?ml$/i.test(path),
        });
        for (const file of await response.files()) {
          files.push({ path: file.path, content: await file.content() });
        }
        commit = response.etag;
      }
    } catch (error) {
      if (isError(error) && error.name === 'NotFoundError') {
        throw new InputError(
          `No manifests at ${target}${
            version ? ` (version '${version}')` : ''
          }: ${error.message}`,
        );
      }
      if (isError(error) && error.name === 'NotAllowedError') {
        // No integration reads the host, or it is not among backend.reading.allow.
        throw new InputError(
          `The manifests at ${target} cannot be read by this Backstage: ${error.message}`,
        );
      }
      if (isError(error) && error.name === 'InputError') throw error;
      throw new ServiceUnavailableError(
        `Could not read the manifests at ${target}: ${
          isError(error) ? error.message : String(error)
        }`,
      );
    }
    const read = files.reduce((sum, file) => sum + file.content.length, 0);
    if (read > MAX_MANIFEST_FILE_BYTES) {
      // Refused before parsing: a YAML parse takes time and memory in proportion.
      throw new InputError(
        `The manifests at ${target} are ${read} bytes of YAML: Fleet reads at most ${MAX_MANIFEST_FILE_BYTES} per component`,
      );
    }
    files.sort((a, b) => a.path.localeCompare(b.path, 'en'));
    const objects = files.flatMap(file =>
      objectsOf(file.path, file.content.toString('utf8')),
    );
    if (objects.length === 0) {
      throw new InputError(
        `No Kubernetes object in the manifests at ${target}`,
      );
    }
    assertWithinBounds(target, objects);
    return { url: target, version, commit: commit || undefined, objects };
  }
}

/** Refuses manifests past the bounds a revision can record. */
export function assertWithinBounds(
  where: string,
  objects: readonly KubernetesObject[],
): void {
  if (objects.length > MAX_MANIFEST_OBJECTS) {
    throw new InputError(
      `The manifests at ${where} hold ${objects.length} objects: Fleet deploys and records at most ${MAX_MANIFEST_OBJECTS} per component`,
    );
  }
  const bytes = Buffer.byteLength(JSON.stringify(objects));
  if (bytes > MAX_MANIFEST_BYTES) {
    throw new InputError(
      `The manifests at ${where} are ${bytes} bytes as JSON: Fleet deploys and records at most ${MAX_MANIFEST_BYTES} bytes per component`,
    );
  }
}

/** The Kubernetes objects of one YAML file; an `InputError` names the file and document. */
function objectsOf(path: string, text: string): KubernetesObject[] {
  const objects: KubernetesObject[] = [];
  parseAllDocuments(text).forEach((document, index) => {
    const where = `${path} (document ${index + 1})`;
    if ('errors' in document && document.errors.length > 0) {
      throw new InputError(
        `${where} is not valid YAML: ${document.errors[0].message}`,
      );
    }
    let value: unknown;
    try {
      // Aliases expand as they are read: past the bound (a YAML bomb), or to an anchor the
      // document does not set, the document is refused.
      value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      throw new InputError(
        `${where} is not valid YAML: ${
          isError(error) ? error.message : String(error)
        }`,
      );
    }
    if (value === null || value === undefined) return;
    const list = value as { kind?: unknown; items?: unknown };
    for (const object of list?.kind === 'List' && Array.isArray(list.items)
      ? list.items
      : [value]) {
      objects.push(checkedObject(where, object));
    }
  });
  return objects;
}

function checkedObject(where: string, value: unknown): KubernetesObject {
  const object = value as KubernetesObject;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InputError(`${where} is not a Kubernetes object`);
  }
  for (const [field, present] of [
    ['apiVersion', typeof object.apiVersion === 'string'],
    ['kind', typeof object.kind === 'string'],
    ['metadata.name', typeof object.metadata?.name === 'string'],
  ] as const) {
    if (!present) {
      throw new InputError(`${where} has no ${field}: every object needs one`);
    }
  }
  return object;
}
