import { parseGitHostUrl } from './parseGitHostUrl';

describe('parseGitHostUrl', () => {
  it('splits a folder URL into repository, kind and ref-and-path segments', () => {
    expect(
      parseGitHostUrl(
        'http://h:1/git/team/inventory.git/tree/release/1.0/deploy',
        'http://h:1/git/',
      ),
    ).toEqual({
      repository: 'team/inventory',
      cloneUrl: 'http://h:1/git/team/inventory.git',
      kind: 'tree',
      refAndPath: ['release', '1.0', 'deploy'],
    });
  });

  it('reads a file URL, decoding its segments', () => {
    expect(
      parseGitHostUrl(
        'http://h:1/inventory.git/blob/main/a%20b.yaml',
        'http://h:1',
      ),
    ).toMatchObject({
      repository: 'inventory',
      kind: 'blob',
      refAndPath: ['main', 'a b.yaml'],
    });
  });

  it('takes a bare repository URL as the root of the default branch', () => {
    expect(
      parseGitHostUrl('http://h:1/inventory.git', 'http://h:1'),
    ).toMatchObject({
      kind: 'tree',
      refAndPath: [],
    });
  });

  it.each([
    ['http://other:1/inventory.git/tree/main', /not a URL under the Git host/],
    ['http://h:1/inventory/tree/main', /names no repository/],
    ['http://h:1/inventory.git/raw/main/a', /blob\/<ref>\/<path> or \/tree/],
    ['http://h:1/inventory.git/tree/main/..%2Fx', /must not hold/],
  ])('refuses %s', (url, message) => {
    expect(() => parseGitHostUrl(url, 'http://h:1')).toThrow(message);
  });

  it('refuses a malformed percent-escape with an InputError naming the URL', () => {
    const url = 'http://h/inv.git/blob/main/%E0%A4%A';
    expect(() => parseGitHostUrl(url, 'http://h')).toThrow(
      expect.objectContaining({
        name: 'InputError',
        message: `${url} holds a malformed percent-escape`,
      }),
    );
  });
});
