/** The setting that lists the Prometheus servers analyses may query. */
export const ALLOWED_ADDRESSES_SETTING =
  'fleet.analysis.prometheus.allowedAddresses';

/**
 * A Prometheus base URL in one spelling: the WHATWG URL parser's (scheme and host in lower case,
 * the default port dropped, `.` and `..` path segments resolved, percent-encoding fixed), without
 * the trailing `/` of its path (queries go to `<address>/api/v1/query` either way). Undefined for
 * what is not an http(s) URL, or one with a query or a fragment (Fleet would drop them).
 */
export function normalizePrometheusAddress(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.search || url.hash || value.includes('?') || value.includes('#'))
    return undefined;
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url.href.replace(/\/$/, '');
}

/**
 * Reads the allowed addresses from config: each must be an http(s) URL without query or
 * fragment; a wrong entry stops the backend at startup, naming it.
 */
export function readAllowedAddresses(entries: string[]): string[] {
  return entries.map((entry, index) => {
    const normalized = normalizePrometheusAddress(entry);
    if (!normalized) {
      throw new Error(
        `Invalid config value ${ALLOWED_ADDRESSES_SETTING}[${index}]='${entry}': expected an http(s) URL without query or fragment, such as http://prometheus.monitoring.svc:9090`,
      );
    }
    return normalized;
  });
}
