import {
  compareQuantities,
  configKeyProblems,
  ingressHostProblems,
  ingressPathProblems,
  isIpAddress,
  nodeFieldSelectorProblems,
  requestsAboveLimits,
} from './kubernetesRules';

describe('the API server rules Fleet shares with the simulator', () => {
  it('reads IP addresses as Go net.ParseIP does', () => {
    for (const ip of [
      '10.0.0.1',
      '255.255.255.255',
      '::1',
      '2001:db8::8a2e:370:7334',
      '::ffff:10.0.0.1',
    ])
      expect([ip, isIpAddress(ip)]).toEqual([ip, true]);
    for (const name of [
      '256.1.1.1',
      '10.0.0',
      'web.example.com',
      '1.2.3.4.5',
      'a::b::c',
      'dead:beef',
    ])
      expect([name, isIpAddress(name)]).toEqual([name, false]);
  });

  it('checks Ingress hosts: no IP, a DNS subdomain, a wildcard only as the first label', () => {
    expect(ingressHostProblems('web.example.com')).toEqual([]);
    expect(ingressHostProblems('*.example.com')).toEqual([]);
    expect(ingressHostProblems('10.0.0.1')).toEqual([
      'must be a DNS name, not an IP address',
    ]);
    expect(ingressHostProblems('a.*.example.com')[0]).toMatch(
      /^a wildcard DNS-1123 subdomain/,
    );
    expect(ingressHostProblems('Web.example.com')[0]).toMatch(
      /^a lowercase RFC 1123 subdomain/,
    );
    expect(ingressHostProblems(`${'a'.repeat(250)}.com`)).toContain(
      'must be no more than 253 characters',
    );
  });

  it('checks Ingress paths by their pathType', () => {
    expect(ingressPathProblems('/api/v1', 'Prefix')).toEqual([]);
    expect(ingressPathProblems('/a//b', 'Prefix')).toEqual([
      "must not contain '//'",
    ]);
    expect(ingressPathProblems('/a/./b', 'Exact')).toEqual([
      "must not contain '/./'",
    ]);
    expect(ingressPathProblems('/a/..', 'Prefix')).toEqual([
      "cannot end with '/..'",
    ]);
    expect(ingressPathProblems('api', 'Prefix')).toEqual([
      'must be an absolute path',
    ]);
    expect(ingressPathProblems('/a//b', 'ImplementationSpecific')).toEqual([]);
  });

  it('checks config keys', () => {
    expect(configKeyProblems('tls.crt')).toEqual([]);
    expect(configKeyProblems('..')).toEqual(["must not be '..'"]);
    expect(configKeyProblems('..a')).toEqual(["must not start with '..'"]);
    expect(configKeyProblems('a/b')).toHaveLength(1);
  });

  it('compares quantities exactly, across suffixes', () => {
    expect(compareQuantities('1500m', '1')).toBe(1);
    expect(compareQuantities('1Gi', '1024Mi')).toBe(0);
    expect(compareQuantities('1G', '1Gi')).toBe(-1);
    expect(compareQuantities('0.1', '100m')).toBe(0);
    expect(compareQuantities('1e3', '1k')).toBe(0);
    expect(compareQuantities('12x', '1')).toBeUndefined();
    expect(
      requestsAboveLimits({
        requests: { cpu: '500m', memory: '1Gi', 'example.com/gpu': '2' },
        limits: { cpu: '200m', memory: '2Gi', 'example.com/gpu': '1' },
      }),
    ).toEqual([
      {
        name: 'cpu',
        request: '500m',
        message: 'must be less than or equal to cpu limit of 200m',
      },
    ]);
  });

  it('checks node field selectors: metadata.name, In or NotIn, one value', () => {
    expect(
      nodeFieldSelectorProblems({
        key: 'metadata.name',
        operator: 'In',
        values: ['n1'],
      }),
    ).toEqual([]);
    expect(
      nodeFieldSelectorProblems({
        key: 'metadata.uid',
        operator: 'Exists',
        values: ['a', 'b'],
      }).map(p => p.field),
    ).toEqual(['operator', 'key']);
    expect(
      nodeFieldSelectorProblems({
        key: 'metadata.name',
        operator: 'In',
        values: ['a', 'b'],
      }).map(p => p.field),
    ).toEqual(['values']);
  });
});
