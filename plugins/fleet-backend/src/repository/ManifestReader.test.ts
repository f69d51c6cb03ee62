import type { UrlReaderService } from '@backstage/backend-plugin-api';
import { ManifestReader } from './ManifestReader';

const URL_OF_FILE = 'https://git.example.com/inventory.git/blob/main/all.yaml';

/** A reader that serves one file, whatever URL it is asked for. */
function readerOf(text: string): ManifestReader {
  const reader: Partial<UrlReaderService> = {
    readUrl: async () => ({
      buffer: async () => Buffer.from(text, 'utf8'),
      stream: () => {
        throw new Error('not used');
      },
      etag: 'abc123',
    }),
  };
  return new ManifestReader(reader as UrlReaderService);
}

const configMap = [
  'apiVersion: v1',
  'kind: ConfigMap',
  'metadata: { name: web-config }',
].join('\n');

describe('ManifestReader', () => {
  it('reads the objects of a file, a List giving its items', async () => {
    const set = await readerOf(
      [
        configMap,
        '---',
        'apiVersion: v1',
        'kind: List',
        'items:',
        '  - { apiVersion: v1, kind: Service, metadata: { name: web } }',
      ].join('\n'),
    ).read(URL_OF_FILE);
    expect(set.objects.map(o => `${o.kind}/${o.metadata?.name}`)).toEqual([
      'ConfigMap/web-config',
      'Service/web',
    ]);
    expect(set.commit).toBe('abc123');
  });

  it("refuses a document whose aliases expand past the bound (a YAML bomb) as the caller's mistake", async () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
      configMap,
    ].join('\n');
    const read = readerOf(bomb).read(URL_OF_FILE);
    await expect(read).rejects.toMatchObject({ name: 'InputError' });
    await expect(readerOf(bomb).read(URL_OF_FILE)).rejects.toThrow(
      `${URL_OF_FILE} (document 1) is not valid YAML`,
    );
  });

  it("refuses an alias to an anchor the document does not set as the caller's mistake", async () => {
    const read = readerOf(
      ['apiVersion: v1', 'kind: ConfigMap', 'metadata: { name: *nope }'].join(
        '\n',
      ),
    ).read(URL_OF_FILE);
    await expect(read).rejects.toMatchObject({ name: 'InputError' });
  });

  it('refuses a document that is no object, and one without a name', async () => {
    await expect(readerOf('just text').read(URL_OF_FILE)).rejects.toThrow(
      'is not a Kubernetes object',
    );
    await expect(
      readerOf('apiVersion: v1\nkind: ConfigMap').read(URL_OF_FILE),
    ).rejects.toThrow('has no metadata.name');
  });

  it('refuses manifests past the bounds of a revision: 501 objects, more than 1 MiB', async () => {
    const many = Array.from(
      { length: 501 },
      (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: c${i} }`,
    ).join('\n---\n');
    await expect(readerOf(many).read(URL_OF_FILE)).rejects.toMatchObject({
      name: 'InputError',
      message: expect.stringContaining('hold 501 objects'),
    });
    const big = `${configMap}\ndata: { big: ${'x'.repeat(1024 * 1024)} }`;
    await expect(readerOf(big).read(URL_OF_FILE)).rejects.toMatchObject({
      name: 'InputError',
      message: expect.stringContaining('bytes as JSON'),
    });
  });

  it("refuses a URL no integration may read as the caller's mistake, not as an outage", async () => {
    const reader = new ManifestReader({
      readUrl: async (url: string) => {
        const error = new Error(
          `Reading from '${url}' is not allowed. You may need to configure an integration for the target host`,
        );
        error.name = 'NotAllowedError';
        throw error;
      },
    } as Partial<UrlReaderService> as UrlReaderService);
    await expect(reader.read(URL_OF_FILE)).rejects.toMatchObject({
      name: 'InputError',
      message: expect.stringContaining('configure an integration'),
    });
  });

  it('refuses files too large to be a revision before it parses them', async () => {
    const padded = `${'# padding\n'.repeat(500_000)}${configMap}`;
    await expect(readerOf(padded).read(URL_OF_FILE)).rejects.toMatchObject({
      name: 'InputError',
      message: expect.stringContaining('bytes of YAML'),
    });
  });
});
