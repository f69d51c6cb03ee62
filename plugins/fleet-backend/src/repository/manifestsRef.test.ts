import { atVersion, isFileUrl, manifestsUrlOf } from './manifestsRef';

const ENTITY = 'component:default/inventory';

describe('manifestsUrlOf', () => {
  it('resolves dir: against the source location, with or without its trailing slash', () => {
    for (const location of [
      'url:https://git.example.com/inventory.git/tree/main/',
      'url:https://git.example.com/inventory.git/tree/main',
    ]) {
      expect(
        manifestsUrlOf(ENTITY, {
          'backstage.io/source-location': location,
          'cnp.io/manifests-ref': 'dir:./deploy',
        }),
      ).toBe('https://git.example.com/inventory.git/tree/main/deploy');
    }
  });

  it('takes url: as it is, and gives nothing without the annotation', () => {
    expect(
      manifestsUrlOf(ENTITY, {
        'cnp.io/manifests-ref':
          'url:https://github.com/acme/inventory/blob/main/k8s/all.yaml',
      }),
    ).toBe('https://github.com/acme/inventory/blob/main/k8s/all.yaml');
    expect(manifestsUrlOf(ENTITY, {})).toBeUndefined();
  });

  it.each([
    [{ 'cnp.io/manifests-ref': 'deploy' }, /must be 'dir:/],
    [{ 'cnp.io/manifests-ref': 'dir:./deploy' }, /which it has none/],
    [
      {
        'cnp.io/manifests-ref': 'dir:./deploy',
        'backstage.io/source-location': 'file:/tmp/x',
      },
      /is not a url: location/,
    ],
    [
      {
        'cnp.io/manifests-ref': 'dir:../../other',
        'backstage.io/source-location':
          'url:https://git.example.com/inventory.git/tree/main/',
      },
      /leaves its source location/,
    ],
    [{ 'cnp.io/manifests-ref': 'url:ftp://x/y' }, /must be an http\(s\) URL/],
    // A reader decodes escapes: the URL checked must be the one read.
    [
      {
        'cnp.io/manifests-ref':
          'url:https://github.com/acme/payments-x%5C..%5Cledger/tree/main/deploy',
      },
      /must not escape a slash, a backslash or a dot/,
    ],
    [
      {
        'cnp.io/manifests-ref':
          'url:https://github.com/acme/payments-x%2F..%2Fledger/tree/main',
      },
      /must not escape a slash/,
    ],
    [
      {
        'cnp.io/manifests-ref': 'dir:./deploy%2F..%2F..%2Fledger',
        'backstage.io/source-location':
          'url:https://git.example.com/inventory.git/tree/main/',
      },
      /must not escape a slash, a backslash or a dot/,
    ],
    [
      {
        'cnp.io/manifests-ref':
          'url:https://github.com/acme/payments/tree/main/deploy#ledger',
      },
      /no fragment or credentials/,
    ],
    [
      {
        'cnp.io/manifests-ref':
          'url:https://user:token@github.com/acme/payments/tree/main',
      },
      /no fragment or credentials/,
    ],
    [{ 'cnp.io/manifests-ref': 'url:not a url' }, /names no absolute URL/],
  ])('refuses %j, naming the annotation', (annotations, message) => {
    expect(() => manifestsUrlOf(ENTITY, annotations)).toThrow(message);
    expect(() => manifestsUrlOf(ENTITY, annotations)).toThrow(
      /cnp.io\/manifests-ref annotation of 'component:default\/inventory'/,
    );
  });
});

describe('atVersion', () => {
  it('replaces the ref after tree/ or blob/, and adds one after a .git path', () => {
    expect(
      atVersion('https://git.example.com/inventory.git/tree/main/deploy', 'v2'),
    ).toBe('https://git.example.com/inventory.git/tree/v2/deploy');
    expect(
      atVersion(
        'https://github.com/acme/inv/blob/main/all.yaml',
        'release/1.0',
      ),
    ).toBe('https://github.com/acme/inv/blob/release/1.0/all.yaml');
    expect(atVersion('https://git.example.com/inventory.git', 'abc123')).toBe(
      'https://git.example.com/inventory.git/tree/abc123',
    );
    expect(atVersion('https://x/y/tree/main/deploy', undefined)).toBe(
      'https://x/y/tree/main/deploy',
    );
  });

  it('refuses a URL with no ref to replace, and a version that would leave its place', () => {
    expect(() => atVersion('https://x/deploy/all.yaml', 'v2')).toThrow(
      /names no ref/,
    );
    for (const version of ['main/../../etc', 'a//b', './x']) {
      expect(() =>
        atVersion('https://x/r.git/tree/main/deploy', version),
      ).toThrow(/Invalid version/);
    }
  });

  it('refuses a version whose escapes or backslashes the URL would read as another path', () => {
    for (const version of [
      '%2e%2e/%2e%2e/%2e%2e/secrets.git/tree/main',
      '..\\..\\..\\secrets.git/tree/main',
      '.%2E',
      'main?ref=other',
      'main#x',
      'main branch',
    ]) {
      expect(() =>
        atVersion(
          'https://git.example.com/inventory.git/tree/main/deploy',
          version,
        ),
      ).toThrow(/Invalid version/);
    }
  });

  it('tells a file from a folder', () => {
    expect(isFileUrl('https://x/r/blob/main/all.yaml')).toBe(true);
    expect(isFileUrl('https://x/r/blob/main/all.YML')).toBe(true);
    expect(isFileUrl('https://x/r/tree/main/deploy')).toBe(false);
  });
});
