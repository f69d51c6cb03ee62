import { parse } from 'yaml';
import { parseErrorSummary } from '@cnp/plugin-fleet-node';

/*
 * A kubeconfig that does not come from the allowed directories (a Secret of the hub cluster,
 * found by discovery or named by a manual `secret:` reference) is written by whoever may write
 * that Secret. client-node acts on some fields while it parses (it reads `token-file` at once)
 * and on others when it connects (certificate files, exec and auth-provider plugins): each would
 * make Fleet read a file of its own host, or run a program there, for that writer. So such a
 * kubeconfig is parsed here first, with `yaml`, and every user and cluster entry is checked, not
 * only those of the current context; client-node is then given the checked document, never the
 * original text (so the two parsers cannot read it differently).
 */

/** The fields a kubeconfig held in a Secret may not set, with what each would make Fleet do. */
const REFUSED_FIELDS: ReadonlyArray<readonly [field: string, does: string]> = [
  ['token-file', 'reads a token file of the backend host'],
  ['tokenFile', 'reads a token file of the backend host'],
  ['client-certificate', 'reads a certificate file of the backend host'],
  ['client-key', 'reads a key file of the backend host'],
  ['certificate-authority', 'reads a CA file of the backend host'],
  ['exec', 'runs a program on the backend host'],
  ['auth-provider', 'runs an auth-provider plugin on the backend host'],
];

/** The parts of a kubeconfig client-node reads; nothing else is handed on. */
const KEPT_KEYS = [
  'apiVersion',
  'kind',
  'clusters',
  'users',
  'contexts',
  'current-context',
];

export type UntrustedKubeconfigCheck =
  /** `text` is the checked document, for client-node's `loadFromString`. */
  | { kind: 'ok'; text: string }
  /**
   * What is wrong (to follow the kubeconfig's name: "is refused: users[1] 'ci' sets
   * 'token-file', ..."), naming the entry and the field; never a value of the kubeconfig.
   */
  | { kind: 'refused'; problem: string };

/** How an entry is named in a problem: its index, and its name when that is plain. */
function entryName(list: string, index: number, entry: unknown): string {
  const name = (entry as { name?: unknown } | null)?.name;
  return typeof name === 'string' && /^[-A-Za-z0-9_.:@/]{1,63}$/.test(name)
    ? `${list}[${index}] '${name}'`
    : `${list}[${index}]`;
}

function refusedField(
  list: 'clusters' | 'users',
  entries: unknown,
): string | undefined {
  if (entries === undefined || entries === null) return undefined;
  if (!Array.isArray(entries))
    return `is not a valid kubeconfig: its ${list} are not a list`;
  const inner = list === 'clusters' ? 'cluster' : 'user';
  for (const [index, entry] of entries.entries()) {
    const body = (entry as Record<string, unknown> | null)?.[inner];
    if (body === undefined || body === null) continue;
    if (typeof body !== 'object' || Array.isArray(body))
      return `is not a valid kubeconfig: ${entryName(
        list,
        index,
        entry,
      )} has a ${inner} that is not a map`;
    for (const [field, does] of REFUSED_FIELDS) {
      if (Object.prototype.hasOwnProperty.call(body, field)) {
        return `is refused: ${entryName(
          list,
          index,
          entry,
        )} sets '${field}', which ${does}; a kubeconfig held in a Secret must carry its credentials inline (token, client-certificate-data, client-key-data, certificate-authority-data) and may not name files or plugins`;
      }
    }
  }
  return undefined;
}

/**
 * Parses a kubeconfig that is not from the allowed directories and refuses it when any user or
 * cluster entry names a file of the backend host (`token-file`, `tokenFile`,
 * `client-certificate`, `client-key`, `certificate-authority`) or a plugin (`exec`,
 * `auth-provider`). A parse error keeps its first line only (never the parser's excerpt).
 */
export function checkUntrustedKubeconfig(
  text: string,
): UntrustedKubeconfigCheck {
  let document: unknown;
  try {
    // Merge keys resolved as client-node's parser resolves them, so what is checked is what
    // it would read; aliases are bounded (a billion laughs is an error, not a hang).
    document = parse(text, { merge: true, maxAliasCount: 100 });
  } catch (error) {
    return {
      kind: 'refused',
      problem: `is not a valid kubeconfig: ${parseErrorSummary(error)}`,
    };
  }
  if (!document || typeof document !== 'object' || Array.isArray(document)) {
    return {
      kind: 'refused',
      problem: 'is not a valid kubeconfig: it is not a map',
    };
  }
  const config = document as Record<string, unknown>;
  const problem =
    refusedField('users', config.users) ??
    refusedField('clusters', config.clusters);
  if (problem) return { kind: 'refused', problem };
  const kept = Object.fromEntries(
    KEPT_KEYS.filter(key => config[key] !== undefined).map(key => [
      key,
      config[key],
    ]),
  );
  return { kind: 'ok', text: JSON.stringify(kept) };
}
