/**
 * Whether two API server URLs name the same server: compared as URLs (case of the scheme and
 * host, a default port and trailing slashes do not count). Fleet sends a kubeconfig's
 * credentials only to the server that kubeconfig names.
 *
 * @public
 */
export function sameKubernetesServer(a: string, b: string): boolean {
  const normalize = (value: string) => {
    try {
      return new URL(value).href.replace(/\/+$/, '');
    } catch {
      return value.replace(/\/+$/, '');
    }
  };
  return normalize(a) === normalize(b);
}
