import { parseCreateApplication, parsePatchApplication } from './validation';

// An application's stages as a request gives them: parsed (a selector's text form becomes the
// structured one) or refused with a 400 naming the stage's field.

const entityRef = 'component:default/payments';

describe('stages in an application request', () => {
  it('parses a stage selector as a placement selector', () => {
    const body = parseCreateApplication({
      entityRef,
      spec: {
        image: 'ghcr.io/acme/payments:1.5.0',
        stages: [
          { name: 'staging', clusters: ['sim-1'] },
          {
            name: 'prod',
            clusterSelector: 'env in (prod)',
            requires: {
              stage: 'staging',
              soak: '1d',
              approvals: { groups: ['group:default/sre'] },
            },
          },
        ],
      },
    });
    expect(body.spec.stages?.[1]).toEqual({
      name: 'prod',
      clusterSelector: {
        matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }],
      },
      requires: {
        stage: 'staging',
        soak: '1d',
        approvals: { groups: ['group:default/sre'] },
      },
    });
  });

  it('refuses stages out of order, twice named, sharing a cluster or badly selected', () => {
    expect(() =>
      parsePatchApplication({
        spec: {
          stages: [
            {
              name: 'prod',
              clusters: ['sim-1'],
              requires: { stage: 'staging' },
            },
            { name: 'staging', clusters: ['sim-1'] },
            { name: 'staging', clusterSelector: 'env in (' },
          ],
        },
      }),
    ).toThrow(
      expect.objectContaining({
        name: 'InputError',
        message: expect.stringMatching(
          /spec\.stages\.0\.requires\.stage: must name an earlier stage.*spec\.stages\.1\.clusters: cluster 'sim-1' is in stage 'prod' already/s,
        ),
      }),
    );
    expect(() =>
      parsePatchApplication({
        spec: { stages: [{ name: 'a', clusterSelector: 'env in (' }] },
      }),
    ).toThrow(
      /spec\.stages\.0\.clusterSelector: must be a label map or a selector/,
    );
    expect(() =>
      parsePatchApplication({
        spec: {
          stages: [
            {
              name: 'a',
              clusters: ['x'],
              requires: { stage: 'a', soak: '1w' },
            },
          ],
        },
      }),
    ).toThrow(
      /spec\.stages\.0\.requires\.soak: must be a duration such as 30m, 2h or 1d/,
    );
  });
});
