import { normalizeServer } from './clusterIdentity';

describe('normalizeServer', () => {
  const sim1 = 'https://127.0.0.1:6550/clusters/sim-1';

  it.each([
    'https://127.0.0.1:6550/clusters/sim-1',
    'https://localhost:6550/clusters/sim-1',
    'https://LOCALHOST:6550/clusters/sim-1/',
    'https://localhost.:6550/clusters/sim-1',
    'https://[::1]:6550/clusters/sim-1',
    'https://[::ffff:127.0.0.1]:6550/clusters/sim-1',
    'https://[0:0:0:0:0:ffff:7f00:1]:6550/clusters/sim-1',
    'https://127.1:6550/clusters/sim-1',
    'https://0x7f.0.0.1:6550/clusters/sim-1',
    'https://127.0.0.1:6550//clusters/sim-1',
    'https://127.0.0.1:6550/clusters//sim-1//',
    'https://127.0.0.1:6550/clusters/./sim-1',
    'https://127.0.0.1:6550/clusters/x/../sim-1',
    'https://127.0.0.1:6550/clusters/sim%2D1',
    'https://127.0.0.1:6550/%63lusters/sim-1',
    'HTTPS://127.0.0.1:6550/clusters/sim-1',
    'https://user@127.0.0.1:6550/clusters/sim-1',
    ' https://127.0.0.1:6550/clusters/sim-1?x=1#y ',
  ])('takes %s as the same API server as sim-1', alias => {
    expect(normalizeServer(alias)).toBe(sim1);
  });

  it('drops the default port and the trailing dot of a host name', () => {
    expect(normalizeServer('https://Prod.Example.:443/')).toBe(
      'https://prod.example',
    );
    expect(normalizeServer('http://prod.example:80')).toBe(
      'http://prod.example',
    );
    expect(normalizeServer('https://[::FFFF:10.1.2.3]:6443')).toBe(
      'https://10.1.2.3:6443',
    );
  });

  it.each([
    // Paths are case-sensitive behind a proxy, as on the API server.
    'https://127.0.0.1:6550/clusters/SIM-1',
    'https://127.0.0.1:6550/clusters/sim-2',
    'https://127.0.0.2:6550/clusters/sim-1',
    'https://127.0.0.1:6551/clusters/sim-1',
    'http://127.0.0.1:6550/clusters/sim-1',
    'https://127.0.0.1:6550/clusters/sim%2F1',
  ])('keeps %s another API server', other => {
    expect(normalizeServer(other)).not.toBe(sim1);
  });
});
