import {
  registerMswTestHooks,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { fleetApiRef } from '../../api';
import {
  fleetBase,
  mswFleetClient,
  seenRequest,
  type SeenRequest,
} from '../../__testUtils__/mswFleet';
import { cluster, manifestsPreview, release } from '../../testUtils/fixtures';
import { ReleaseDialog } from './ReleaseDialog';

const server = setupServer();
registerMswTestHooks(server);

/** ledger's previews and releases; `refused` makes every cluster of a preview refused. */
function serve(options: { refused?: boolean } = {}) {
  const seen: SeenRequest[] = [];
  server.use(
    http.post(`${fleetBase}/applications/:id/preview`, async ({ request }) => {
      seen.push(await seenRequest(request));
      const preview = manifestsPreview();
      if (options.refused)
        preview.clusters = preview.clusters.map(c => ({
          ...c,
          status: 'refused',
          message: `The ownership rules refuse ledger on ${c.cluster}`,
          objects: [],
        }));
      return HttpResponse.json(preview);
    }),
    http.post(`${fleetBase}/applications/:id/releases`, async ({ request }) => {
      seen.push(await seenRequest(request));
      return HttpResponse.json(release(['sim-1'], []), { status: 201 });
    }),
  );
  return seen;
}

/** The release dialog of ledger, with its own manifests unless `generated`. */
async function renderDialog(options: { generated?: boolean } = {}) {
  const manifestsRef = options.generated ? undefined : 'dir:./deploy';
  const onReleased = jest.fn();
  const onClose = jest.fn();
  await renderInTestApp(
    <TestApiProvider apis={[[fleetApiRef, mswFleetClient()]]}>
      <ReleaseDialog
        open
        componentName="ledger"
        applicationId="app-9"
        clusters={[cluster('sim-1', 'ONLINE'), cluster('sim-2', 'ONLINE')]}
        placedClusters={['sim-1', 'sim-2']}
        defaultImage={manifestsRef ? undefined : 'ghcr.io/acme/ledger:1.0.0'}
        manifestsRef={manifestsRef}
        onClose={onClose}
        onReleased={onReleased}
      />
    </TestApiProvider>,
  );
  return { onReleased, onClose };
}

describe('ReleaseDialog of a component with its own manifests', () => {
  it('previews the release on its clusters before starting it with the version', async () => {
    const seen = serve();
    const { onReleased, onClose } = await renderDialog();
    const start = screen.getByRole('button', { name: 'Start release' });
    expect(start).toBeDisabled();
    await userEvent.type(
      screen.getByRole('textbox', { name: 'Version' }),
      'v2.1.0',
    );
    expect(start).toBeDisabled();

    await userEvent.click(screen.getByRole('button', { name: 'Preview' }));
    const sim1 = await screen.findByRole('table', { name: 'Preview of sim-1' });
    expect(within(sim1).getAllByRole('row')).toHaveLength(5);
    expect(
      screen.getByRole('alert', { name: 'sim-2 refused' }),
    ).toHaveTextContent(
      "Project 'finance' does not allow kind ClusterRole on cluster 'sim-2'",
    );
    // No cluster picked: the API previews the application's own clusters.
    expect(seen).toEqual([
      {
        method: 'POST',
        path: '/api/fleet/applications/app-9/preview',
        body: { version: 'v2.1.0' },
      },
    ]);

    // One cluster would apply: the release may start.
    expect(start).toBeEnabled();
    await userEvent.click(start);
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(onReleased).toHaveBeenCalledWith(
      expect.objectContaining({ id: 'rel-1' }),
    );
    expect(seen[1]).toEqual({
      method: 'POST',
      path: '/api/fleet/applications/app-9/releases',
      body: { version: 'v2.1.0' },
    });
  });

  it('previews the clusters picked, and a new preview once they change', async () => {
    const seen = serve();
    await renderDialog();
    await userEvent.click(screen.getByRole('checkbox', { name: /sim-1/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Preview' }));
    await screen.findByRole('table', { name: 'Preview of sim-1' });
    expect(screen.getByRole('button', { name: 'Start release' })).toBeEnabled();

    await userEvent.click(screen.getByRole('checkbox', { name: /sim-2/ }));
    expect(
      screen.getByRole('button', { name: 'Start release' }),
    ).toBeDisabled();
    expect(
      screen.queryByRole('table', { name: 'Preview of sim-1' }),
    ).toBeNull();
    expect(seen.map(s => s.body)).toEqual([{ clusters: ['sim-1'] }]);
  });

  it('keeps Start release disabled when every cluster is refused', async () => {
    serve({ refused: true });
    await renderDialog();
    await userEvent.click(screen.getByRole('button', { name: 'Preview' }));
    expect(
      await screen.findByRole('alert', { name: 'sim-1 refused' }),
    ).toHaveTextContent('The ownership rules refuse ledger on sim-1');
    expect(
      screen.getByRole('alert', { name: 'sim-2 refused' }),
    ).toHaveTextContent('The ownership rules refuse ledger on sim-2');
    expect(
      screen.getByRole('button', { name: 'Start release' }),
    ).toBeDisabled();
  });

  it('lets a generated-workload component preview, and start without one', async () => {
    const seen = serve();
    await renderDialog({ generated: true });
    expect(screen.queryByRole('textbox', { name: 'Version' })).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Preview' }));
    await screen.findByRole('table', { name: 'Preview of sim-1' });
    expect(seen[0].body).toEqual({ image: 'ghcr.io/acme/ledger:1.0.0' });

    await userEvent.clear(screen.getByRole('textbox', { name: 'Image' }));
    await userEvent.type(
      screen.getByRole('textbox', { name: 'Image' }),
      'ghcr.io/acme/ledger:1.1.0',
    );
    await userEvent.click(
      screen.getByRole('button', { name: 'Start release' }),
    );
    await waitFor(() => expect(seen).toHaveLength(2));
    expect(seen[1].body).toEqual({ image: 'ghcr.io/acme/ledger:1.1.0' });
  });
});
