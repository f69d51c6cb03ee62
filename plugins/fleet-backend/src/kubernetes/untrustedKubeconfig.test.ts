import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { checkUntrustedKubeconfig } from './untrustedKubeconfig';

/** A kubeconfig with two contexts: `good` (current) and `other`, each with its own entries. */
function twoContexts(
  other: {
    cluster?: Record<string, unknown>;
    user?: Record<string, unknown>;
  } = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'good',
        cluster: {
          server: 'https://10.0.0.1:6443',
          'certificate-authority-data': 'Y2E=',
        },
      },
      {
        name: 'other',
        cluster: { server: 'https://10.0.0.2:6443', ...other.cluster },
      },
    ],
    users: [
      { name: 'good', user: { token: 'tok-good' } },
      { name: 'other', user: { token: 'tok-other', ...other.user } },
    ],
    contexts: [
      { name: 'good', context: { cluster: 'good', user: 'good' } },
      { name: 'other', context: { cluster: 'other', user: 'other' } },
    ],
    'current-context': 'good',
  };
}

describe('checkUntrustedKubeconfig', () => {
  it('passes a kubeconfig with inline credentials, and client-node reads the checked text as the original', () => {
    const checked = checkUntrustedKubeconfig(stringify(twoContexts()));
    expect(checked.kind).toBe('ok');
    const kc = new KubeConfig();
    kc.loadFromString(checked.kind === 'ok' ? checked.text : '');
    expect(kc.getCurrentContext()).toBe('good');
    expect(kc.getCurrentUser()?.token).toBe('tok-good');
    expect(kc.getCluster('good')?.caData).toBe('Y2E=');
    expect(kc.getContexts().map(c => c.name)).toEqual(['good', 'other']);
  });

  it.each([
    ['users', 'token-file', { user: { 'token-file': '/etc/passwd' } }],
    ['users', 'tokenFile', { user: { tokenFile: '/etc/passwd' } }],
    [
      'users',
      'client-certificate',
      { user: { 'client-certificate': '/etc/tls.crt' } },
    ],
    ['users', 'client-key', { user: { 'client-key': '/etc/tls.key' } }],
    [
      'users',
      'exec',
      { user: { exec: { command: 'sh', apiVersion: 'v1beta1' } } },
    ],
    [
      'users',
      'auth-provider',
      { user: { 'auth-provider': { name: 'gcp', config: {} } } },
    ],
    [
      'clusters',
      'certificate-authority',
      { cluster: { 'certificate-authority': '/etc/ca.crt' } },
    ],
  ])(
    'refuses %s entries that set %s, in a context that is not the current one',
    (list, field, other) => {
      const checked = checkUntrustedKubeconfig(
        stringify(twoContexts(other as Parameters<typeof twoContexts>[0])),
      );
      expect(checked).toEqual({
        kind: 'refused',
        problem: expect.stringContaining(
          `is refused: ${list}[1] 'other' sets '${field}'`,
        ),
      });
      expect(JSON.stringify(checked)).not.toContain('/etc/');
    },
  );

  it('refuses a token-file brought in by a merge key or an alias, as client-node would read it', () => {
    const text = [
      'x-evil: &evil { token-file: /etc/passwd }',
      'clusters: [{ name: c, cluster: { server: "https://10.0.0.1" } }]',
      'users:',
      '- name: u',
      '  user:',
      '    <<: *evil',
      '- name: v',
      '  user: *evil',
      'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      'current-context: x',
    ].join('\n');
    expect(checkUntrustedKubeconfig(text)).toMatchObject({
      kind: 'refused',
      problem: expect.stringContaining("users[0] 'u' sets 'token-file'"),
    });
  });

  it('hands client-node only what it checked: a quoted "<<" key does not merge', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-untrusted-'));
    const tokenFile = path.join(dir, 'token');
    fs.writeFileSync(tokenFile, 'host-secret-token');
    try {
      const text = [
        'clusters: [{ name: c, cluster: { server: "https://10.0.0.1" } }]',
        `users: [{ name: u, user: { "<<": { token-file: ${JSON.stringify(
          tokenFile,
        )} } } }]`,
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        'current-context: x',
      ].join('\n');
      const checked = checkUntrustedKubeconfig(text);
      expect(checked.kind).toBe('ok');
      const kc = new KubeConfig();
      kc.loadFromString(checked.kind === 'ok' ? checked.text : '');
      expect(kc.getCurrentUser()?.token).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says what is wrong with a document that is not a kubeconfig, quoting none of it', () => {
    for (const text of [
      'clusters:\n- token: s3cr3t-marker\n  {{{ [[',
      '- just\n- a list',
      'users: s3cr3t-marker',
      'users: [{ name: u, user: s3cr3t-marker }]',
      'a: &a [*a, *a]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
    ]) {
      const checked = checkUntrustedKubeconfig(text);
      expect(checked).toMatchObject({
        kind: 'refused',
        problem: expect.stringContaining('is not a valid kubeconfig'),
      });
      expect(JSON.stringify(checked)).not.toContain('s3cr3t-marker');
    }
  });

  it('names an entry by index alone when its name is not plain text', () => {
    const config = twoContexts({ user: { 'token-file': '/t' } });
    config.users[1].name = 'evil\u202e name';
    const checked = checkUntrustedKubeconfig(stringify(config));
    expect(checked).toMatchObject({
      kind: 'refused',
      problem: expect.stringContaining("users[1] sets 'token-file'"),
    });
    expect(JSON.stringify(checked)).not.toContain('\u202e');
  });
});
