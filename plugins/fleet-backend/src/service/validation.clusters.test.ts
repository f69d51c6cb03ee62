import { InputError } from '@backstage/errors';
import { parseCreateCluster } from './validation';

const cluster = {
  name: 'edge',
  endpoint: 'https://10.0.0.1:6443',
  kubeconfigRef: 'secret:fleet-system/edge',
};

function refusal(body: object): string {
  try {
    parseCreateCluster(body);
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('cluster registration text', () => {
  it.each([
    ['U+202E right-to-left override', '\u202e'],
    ['U+200B zero-width space', '\u200b'],
    ['U+200D zero-width joiner', '\u200d'],
    ['U+2066 left-to-right isolate', '\u2066'],
    ['U+FEFF byte order mark', '\ufeff'],
    ['U+2028 line separator', '\u2028'],
    ['U+0085 next line', '\u0085'],
  ])(
    'refuses an endpoint, kubeconfigRef or context holding %s, naming the field',
    (_, char) => {
      expect(
        refusal({
          ...cluster,
          endpoint: `https://10.0.0.1:6443/moc.${char}live`,
        }),
      ).toMatch(/^.*endpoint: must not contain invisible or bidirectional/);
      expect(
        refusal({ ...cluster, endpoint: `https://exa${char}mple.com:6443` }),
      ).toContain('endpoint: must not contain invisible');
      expect(
        refusal({ ...cluster, kubeconfigRef: `secret:ns/a${char}b` }),
      ).toContain('kubeconfigRef: must not contain invisible');
      expect(refusal({ ...cluster, context: `c${char}tx` })).toContain(
        'context: must not contain invisible',
      );
    },
  );

  it('refuses an endpoint that is not ASCII (a look-alike host), and takes its xn-- form', () => {
    // Cyrillic 'а' (U+0430) in place of a Latin 'a'.
    expect(
      refusal({ ...cluster, endpoint: 'https://p\u0430yments.example.com' }),
    ).toContain('endpoint: must be ASCII');
    expect(
      parseCreateCluster({
        ...cluster,
        endpoint: 'https://xn--pyments-2fg.example.com',
      }).endpoint,
    ).toBe('https://xn--pyments-2fg.example.com');
  });

  it('keeps taking a name, labels and a context of plain text', () => {
    expect(
      parseCreateCluster({
        ...cluster,
        context: 'kind-edge@team',
        labels: { env: 'prod' },
      }),
    ).toMatchObject({ name: 'edge', context: 'kind-edge@team' });
    expect(refusal({ ...cluster, name: 'edge\u202e' })).toContain('name:');
    expect(refusal({ ...cluster, labels: { env: 'pr\u200bod' } })).toContain(
      'labels.env:',
    );
  });
});
