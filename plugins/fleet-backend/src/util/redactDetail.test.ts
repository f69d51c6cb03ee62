import { HIDDEN_DETAIL, redactDetail } from './redactDetail';

describe('redactDetail', () => {
  it('hides, from the clause it starts in, what names a kubeconfig, a path or a system error code', () => {
    for (const [text, shown] of [
      [
        "NOT_PROBEABLE: kubeconfig file '/k/a.yaml' is not readable (ENOENT)",
        `NOT_PROBEABLE: ${HIDDEN_DETAIL}`,
      ],
      [
        "NOT_PROBEABLE: kubeconfigRef '/etc/shadow' is outside the allowed kubeconfig directories",
        `NOT_PROBEABLE: ${HIDDEN_DETAIL}`,
      ],
      [
        'NOT_PROBEABLE: endpoint https://a:6443 is not the server of kubeconfig file',
        `NOT_PROBEABLE: ${HIDDEN_DETAIL}`,
      ],
      [
        "Cluster 'x' is OFFLINE: PROBE_FAILED: 1/2 consecutive probes failed: connect EACCES",
        `Cluster 'x' is OFFLINE: PROBE_FAILED: 1/2 consecutive probes failed: ${HIDDEN_DETAIL}`,
      ],
      [
        "unusable TLS data: open '/var/ca.crt'",
        `unusable TLS data: ${HIDDEN_DETAIL}`,
      ],
      ['/srv/kubeconfigs/prod.yaml', HIDDEN_DETAIL],
    ]) {
      expect(redactDetail(text)).toBe(shown);
    }
  });

  it('keeps a text that says nothing of the host: codes, tallies, URLs, HTTP answers', () => {
    for (const text of [
      'NEVER_PROBED',
      'RECOVERING: 1/2 consecutive successful probes',
      'FAILURE_THRESHOLD_REACHED: 2/2 consecutive probes failed: HTTP 401: Unauthorized',
      'PROBE_FAILED: 1/2 consecutive probes failed: timed out after 5000 ms',
      'request to https://10.0.0.1:6443/clusters/sim-1/api/v1/namespaces failed',
      'CLUSTER_OFFLINE',
      'labels set to env=prod',
    ]) {
      expect(redactDetail(text)).toBe(text);
    }
    expect(redactDetail(null)).toBeNull();
    expect(redactDetail(undefined)).toBeUndefined();
  });
});
