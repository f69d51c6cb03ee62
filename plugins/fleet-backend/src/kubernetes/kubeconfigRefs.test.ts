import type { V1Secret } from '@kubernetes/client-node';
import {
  formatSecretRef,
  kubeconfigFromSecret,
  parseSecretRef,
} from './kubeconfigRefs';

const kubeconfig = (cluster: Record<string, string>, token = 'tok-123') =>
  [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{ name: c, cluster: ${JSON.stringify({
      server: 'https://10.0.0.1:6443',
      ...cluster,
    })} }]`,
    `users: [{ name: u, user: { token: ${token} } }]`,
    'contexts: [{ name: x, context: { cluster: c, user: u } }]',
    'current-context: x',
  ].join('\n');

const secretWith = (data: Record<string, string>): V1Secret => ({
  data: Object.fromEntries(
    Object.entries(data).map(([k, v]) => [
      k,
      Buffer.from(v).toString('base64'),
    ]),
  ),
});

describe('Secret references', () => {
  it('parses secret:<namespace>/<name>[#key], the key defaulting to kubeconfig', () => {
    expect(parseSecretRef('secret:fleet-system/edge')).toEqual({
      namespace: 'fleet-system',
      name: 'edge',
      key: 'kubeconfig',
    });
    expect(parseSecretRef('secret:capi/edge-kubeconfig#value')).toEqual({
      namespace: 'capi',
      name: 'edge-kubeconfig',
      key: 'value',
    });
    expect(
      formatSecretRef({ namespace: 'a', name: 'b', key: 'kubeconfig' }),
    ).toBe('secret:a/b');
    expect(formatSecretRef({ namespace: 'a', name: 'b', key: 'value' })).toBe(
      'secret:a/b#value',
    );
  });

  it.each([
    'secret:x',
    'secret:/name',
    'secret:ns/',
    'secret:../../etc/passwd',
    'secret:NS/name',
    'secret:ns/name#../key',
    'secret:ns/name/extra',
    `secret:${'n'.repeat(64)}/name`,
    'secret/ns/name',
    '/etc/passwd',
  ])('is not fooled by %s', ref => {
    expect(parseSecretRef(ref)).toBeUndefined();
  });

  it('reads the kubeconfig under the key, and says what is wrong without quoting the value', () => {
    const ref = { namespace: 'ns', name: 's', key: 'kubeconfig' };
    const ok = kubeconfigFromSecret(
      secretWith({
        kubeconfig: kubeconfig({ 'certificate-authority-data': 'Y2E=' }),
      }),
      ref,
    );
    expect(ok.kind).toBe('ok');
    expect(kubeconfigFromSecret(secretWith({ other: 'x' }), ref)).toEqual({
      kind: 'unusable',
      problem: 'has no such key',
    });
    const malformed = kubeconfigFromSecret(
      secretWith({ kubeconfig: 'clusters:\n- token: s3cr3t-marker\n  {{{ [[' }),
      ref,
    );
    expect(malformed.kind).toBe('unusable');
    expect(JSON.stringify(malformed)).toContain('is not a valid kubeconfig');
    expect(JSON.stringify(malformed)).not.toContain('s3cr3t-marker');
    const byPath = kubeconfigFromSecret(
      secretWith({
        kubeconfig: kubeconfig(
          { 'certificate-authority': '/etc/passwd' },
          's3cr3t-2',
        ),
      }),
      ref,
    );
    expect(byPath).toMatchObject({
      kind: 'unusable',
      problem: expect.stringContaining("sets 'certificate-authority'"),
    });
    expect(JSON.stringify(byPath)).not.toContain('s3cr3t-2');
  });
});
