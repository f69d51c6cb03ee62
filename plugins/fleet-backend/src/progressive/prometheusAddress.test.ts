import { InputError } from '@backstage/errors';
import {
  checkAnalysisAddresses,
  isAllowedAddress,
  normalizePrometheusAddress,
} from './prometheusAddress';

const strategyWith = (...addresses: string[]) => ({
  analysis: {
    templates: addresses.map((address, i) => ({
      name: `t${i}`,
      successCondition: 'result[0] > 0',
      provider: { prometheus: { address, query: 'up' } },
    })),
  },
});

describe('Prometheus addresses of analyses', () => {
  const allowed = ['http://prometheus.monitoring.svc:9090'];

  it('admits a listed address in any spelling of the same URL', () => {
    for (const address of [
      'http://prometheus.monitoring.svc:9090',
      'http://prometheus.monitoring.svc:9090/',
      'HTTP://Prometheus.Monitoring.SVC:9090',
      'http://prometheus.monitoring.svc:9090/./',
    ]) {
      expect(isAllowedAddress(address, allowed)).toBe(true);
    }
    expect(normalizePrometheusAddress('https://p.example:443/base/')).toBe(
      'https://p.example/base',
    );
  });

  it('refuses every other address: no prefix, path, port, userinfo or host tricks', () => {
    for (const address of [
      'http://prometheus.monitoring.svc:9090/internal-admin',
      'http://prometheus.monitoring.svc:9090/../internal-admin',
      'http://prometheus.monitoring.svc:90901',
      'http://prometheus.monitoring.svc:9090.evil.example',
      'http://prometheus.monitoring.svc:9090@127.0.0.1:8080',
      'http://user@prometheus.monitoring.svc:9090',
      'http://prometheus.monitoring.svc:9090?x=/internal-admin',
      'http://prometheus.monitoring.svc:9090#x',
      'https://prometheus.monitoring.svc:9090',
      'http://prometheus.monitoring.svc',
      'http://127.0.0.1:9090',
      'file:///etc/passwd',
      'not a url',
    ]) {
      expect(isAllowedAddress(address, allowed)).toBe(false);
    }
  });

  it("is a 400 naming the address and the setting when a strategy's address is not listed", () => {
    expect(() =>
      checkAnalysisAddresses(
        strategyWith(
          'http://prometheus.monitoring.svc:9090',
          'http://127.0.0.1:7007/internal-admin',
        ),
        allowed,
      ),
    ).toThrow(
      new InputError(
        "Invalid release: strategy.analysis.templates.1.provider.prometheus.address: 'http://127.0.0.1:7007/internal-admin' is not one of fleet.analysis.prometheus.allowedAddresses (http://prometheus.monitoring.svc:9090)",
      ),
    );
    expect(() =>
      checkAnalysisAddresses(
        strategyWith('http://prometheus.monitoring.svc:9090/'),
        allowed,
      ),
    ).not.toThrow();
  });

  it('never shows the credentials an allowed address carries', () => {
    expect(() =>
      checkAnalysisAddresses(strategyWith('http://other:9090'), [
        'http://reader:s3cret@prometheus.monitoring.svc:9090',
      ]),
    ).toThrow(
      'is not one of fleet.analysis.prometheus.allowedAddresses (http://prometheus.monitoring.svc:9090)',
    );
  });

  it('accepts no analysis at all while the list is empty (fail closed), and any strategy without one', () => {
    expect(() =>
      checkAnalysisAddresses(
        strategyWith('http://prometheus.monitoring.svc:9090'),
        [],
      ),
    ).toThrow(/lists no address/);
    expect(() => checkAnalysisAddresses({}, [])).not.toThrow();
    expect(() => checkAnalysisAddresses(undefined, [])).not.toThrow();
  });
});
