import { ResponseError } from '@backstage/errors';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fleetApiRef } from '../../api';
import {
  cluster,
  mockFleetApi,
  progressiveRelease,
} from '../../testUtils/fixtures';
import { exampleStrategy } from './exampleStrategy';
import { parseStrategy } from './parseStrategy';
import { ReleaseDialog } from './ReleaseDialog';

async function renderDialog(api = mockFleetApi()) {
  const onReleased = jest.fn();
  const onClose = jest.fn();
  await renderInTestApp(
    <TestApiProvider apis={[[fleetApiRef, api]]}>
      <ReleaseDialog
        open
        componentName="payments"
        applicationId="app-1"
        clusters={[
          cluster('sim-1', 'ONLINE'),
          cluster('sim-2', 'ONLINE'),
          cluster('sim-3', 'OFFLINE'),
        ]}
        placedClusters={['sim-1', 'sim-2']}
        defaultImage="ghcr.io/acme/payments:1.4.2"
        onClose={onClose}
        onReleased={onReleased}
      />
    </TestApiProvider>,
  );
  return { api, onReleased, onClose };
}

/** Replaces the YAML area's text (typing would read braces as key descriptors). */
function writeYaml(text: string) {
  fireEvent.change(screen.getByRole('textbox', { name: 'Strategy (YAML)' }), {
    target: { value: text },
  });
}

describe('ReleaseDialog', () => {
  it('releases the image to every placed cluster without a strategy', async () => {
    const created = progressiveRelease();
    const { api, onReleased, onClose } = await renderDialog(
      mockFleetApi({ createRelease: jest.fn().mockResolvedValue(created) }),
    );
    const image = screen.getByRole('textbox', { name: 'Image' });
    expect(image).toHaveValue('ghcr.io/acme/payments:1.4.2');
    await userEvent.clear(image);
    await userEvent.type(image, 'ghcr.io/acme/payments:1.5.0');
    expect(
      screen.queryByRole('textbox', { name: 'Strategy (YAML)' }),
    ).toBeNull();
    await userEvent.click(
      screen.getByRole('button', { name: 'Start release' }),
    );
    await waitFor(() => expect(onReleased).toHaveBeenCalledWith(created));
    expect(api.createRelease).toHaveBeenCalledWith('app-1', {
      image: 'ghcr.io/acme/payments:1.5.0',
    });
    expect(onClose).toHaveBeenCalled();
  });

  it('sends the parsed strategy and the clusters picked', async () => {
    const { api } = await renderDialog(
      mockFleetApi({
        createRelease: jest.fn().mockResolvedValue(progressiveRelease()),
      }),
    );
    await userEvent.click(screen.getByRole('checkbox', { name: /sim-2/ }));
    expect(screen.getByRole('checkbox', { name: /sim-3/ })).toBeDisabled();
    await userEvent.click(
      screen.getByRole('checkbox', { name: 'Progressive (strategy)' }),
    );
    // Prefilled with an example for the clusters picked.
    expect(
      screen.getByRole('textbox', { name: 'Strategy (YAML)' }),
    ).toHaveValue(exampleStrategy(['sim-2']));
    writeYaml(
      [
        'waves:',
        '  - clusters: [sim-2]',
        'canary:',
        '  steps:',
        '    - setWeight: 20',
        '    - pause: {}',
        '    - pause: { duration: 30s }',
        '    - setWeight: 100',
        '  maxSurge: 25%',
        'rollback: { enabled: true, timeout: 15m }',
      ].join('\n'),
    );
    await userEvent.click(
      screen.getByRole('button', { name: 'Start release' }),
    );
    await waitFor(() => expect(api.createRelease).toHaveBeenCalled());
    expect(api.createRelease).toHaveBeenCalledWith('app-1', {
      image: 'ghcr.io/acme/payments:1.4.2',
      clusters: ['sim-2'],
      strategy: {
        waves: [{ clusters: ['sim-2'] }],
        canary: {
          steps: [
            { setWeight: 20 },
            { pause: {} },
            { pause: { duration: '30s' } },
            { setWeight: 100 },
          ],
          maxSurge: '25%',
        },
        rollback: { enabled: true, timeout: '15m' },
      },
    });
  });

  it('shows a YAML error under the text and does not send', async () => {
    const { api } = await renderDialog();
    await userEvent.click(
      screen.getByRole('checkbox', { name: 'Progressive (strategy)' }),
    );
    writeYaml('canary:\n  steps: [ { setWeight: 20 }\n');
    expect(await screen.findByRole('alert')).toHaveTextContent(
      /Not valid YAML/,
    );
    expect(
      screen.getByRole('button', { name: 'Start release' }),
    ).toBeDisabled();
    writeYaml('- just a list');
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The strategy is a YAML mapping with waves, canary, analysis and rollback',
    );
    expect(api.createRelease).not.toHaveBeenCalled();
  });

  it('shows the 400 of the API in its own words', async () => {
    const invalid = await ResponseError.fromResponse(
      new Response(
        JSON.stringify({
          error: {
            name: 'InputError',
            message:
              'Invalid strategy: canary.steps[0].setWeight must be at most 100',
          },
        }),
        { status: 400, headers: { 'Content-Type': 'application/json' } },
      ) as any,
    );
    const { onReleased } = await renderDialog(
      mockFleetApi({ createRelease: jest.fn().mockRejectedValue(invalid) }),
    );
    await userEvent.click(
      screen.getByRole('checkbox', { name: 'Progressive (strategy)' }),
    );
    await userEvent.click(
      screen.getByRole('button', { name: 'Start release' }),
    );
    const dialog = screen.getByRole('dialog', { name: 'Release payments' });
    expect(await within(dialog).findByRole('alert')).toHaveTextContent(
      'Invalid strategy: canary.steps[0].setWeight must be at most 100',
    );
    expect(onReleased).not.toHaveBeenCalled();
  });
});

describe('exampleStrategy', () => {
  it('parses, one cluster first, then half, then all', () => {
    expect(
      parseStrategy(
        exampleStrategy(['a', 'b', 'c', 'd'], 'http://127.0.0.1:9091'),
      ).strategy,
    ).toMatchObject({
      waves: [{ clusters: ['a'] }, { percent: 50 }, { percent: 100 }],
      canary: {
        steps: [
          { setWeight: 20 },
          { pause: {} },
          { setWeight: 60 },
          { pause: { duration: '30s' } },
          { setWeight: 100 },
        ],
      },
      analysis: {
        templates: [
          expect.objectContaining({
            name: 'http-success-rate',
            successCondition: 'result[0] >= 0.995',
            provider: {
              prometheus: expect.objectContaining({
                address: 'http://127.0.0.1:9091',
              }),
            },
          }),
        ],
      },
      rollback: { enabled: true, timeout: '15m' },
    });
    const withoutAnalysis = parseStrategy(exampleStrategy(['a'])).strategy;
    expect(withoutAnalysis?.waves).toEqual([{ clusters: ['a'] }]);
    expect(withoutAnalysis?.analysis).toBeUndefined();
  });
});
