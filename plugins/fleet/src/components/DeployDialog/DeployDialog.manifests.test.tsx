import { permissionApiRef } from '@backstage/plugin-permission-react';
import {
  mockApis,
  registerMswTestHooks,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import type { Preview } from '@cnp/plugin-fleet-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { SWRConfig } from 'swr';
import { fleetApiRef } from '../../api';
import {
  application,
  cluster,
  deployment,
  manifestsPreview,
  release,
} from '../../testUtils/fixtures';
import {
  fleetBase,
  fleetError,
  mswFleetClient,
  seenRequest,
  type SeenRequest,
} from '../../__testUtils__/mswFleet';
import { DeployDialog } from './DeployDialog';

const server = setupServer();
registerMswTestHooks(server);

const LEDGER = 'component:default/ledger';

/** The preview of `clusters` only, out of the fixture's sim-1 (previewed) and sim-2 (refused). */
function previewOf(...clusters: string[]): Preview {
  const all = manifestsPreview();
  return {
    ...all,
    clusters: all.clusters.filter(c => clusters.includes(c.cluster)),
  };
}

/**
 * The Fleet API of ledger: its application (unless `applications` says none), previews answered
 * by `preview`, deploys answered with a PROGRESSING deployment; every request is recorded.
 */
function serve(options: {
  preview?: (request: SeenRequest) => Promise<Response> | Response;
  applications?: unknown[];
}) {
  const seen: SeenRequest[] = [];
  server.use(
    http.get(`${fleetBase}/applications`, () =>
      HttpResponse.json({
        items: options.applications ?? [application('app-9', LEDGER)],
      }),
    ),
    http.post(`${fleetBase}/applications/:id/preview`, async ({ request }) => {
      const one = await seenRequest(request);
      seen.push(one);
      return options.preview
        ? options.preview(one)
        : HttpResponse.json(previewOf('sim-1'));
    }),
    http.post(`${fleetBase}/applications/:id/releases`, async ({ request }) => {
      seen.push(await seenRequest(request));
      return HttpResponse.json(release(['sim-1'], []), { status: 201 });
    }),
    http.post(`${fleetBase}/deployments`, async ({ request }) => {
      seen.push(await seenRequest(request));
      return HttpResponse.json(
        deployment('sim-1', 'PROGRESSING', { entityRef: LEDGER }),
        { status: 201 },
      );
    }),
  );
  return seen;
}

/**
 * ledger's Deploy dialog; with `releases`, offering releases too (every permission allowed).
 * `setOpen` closes or opens it again, as the card does.
 */
async function renderDialog(options: { releases?: boolean } = {}) {
  const onDeployed = jest.fn();
  const onReleased = jest.fn();
  const onClose = jest.fn();
  const client = mswFleetClient();
  const dialog = (open: boolean) => (
    <TestApiProvider
      apis={[
        [fleetApiRef, client],
        [permissionApiRef, mockApis.permission()],
      ]}
    >
      <SWRConfig value={{ provider: () => new Map() }}>
        <DeployDialog
          open={open}
          entityRef={LEDGER}
          clusters={[cluster('sim-1', 'ONLINE'), cluster('sim-2', 'ONLINE')]}
          preferredClusters={['sim-1', 'sim-2']}
          manifestsRef="dir:./deploy"
          onClose={onClose}
          onDeployed={onDeployed}
          onReleased={options.releases ? onReleased : undefined}
        />
      </SWRConfig>
    </TestApiProvider>
  );
  const { rerender } = await renderInTestApp(dialog(true));
  const setOpen = (open: boolean) => rerender(dialog(open));
  return { onDeployed, onReleased, onClose, setOpen };
}

async function pickCluster(name: string) {
  await userEvent.click(screen.getByRole('button', { name: 'Cluster' }));
  await userEvent.click(await screen.findByText(`${name} — ONLINE`));
}

describe('DeployDialog of a component with its own manifests', () => {
  it('previews the version on the cluster, then deploys that version', async () => {
    let answer: () => void = () => {};
    const seen = serve({
      preview: () =>
        new Promise(resolve => {
          answer = () => resolve(HttpResponse.json(previewOf('sim-1')));
        }),
    });
    const { onDeployed, onClose } = await renderDialog();

    expect(screen.getByRole('textbox', { name: 'Version' })).toHaveValue('');
    expect(
      screen.getByText(/empty: the ref the component's source location names/),
    ).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Image' })).toHaveValue('');
    const deploy = screen.getByRole('button', { name: 'Deploy' });
    expect(deploy).toBeDisabled();

    await userEvent.type(
      screen.getByRole('textbox', { name: 'Version' }),
      'v2.1.0',
    );
    const preview = await screen.findByRole('button', { name: 'Preview' });
    await userEvent.click(preview);
    expect(
      await screen.findByRole('progressbar', { name: 'Loading the preview' }),
    ).toBeInTheDocument();
    expect(deploy).toBeDisabled();
    answer();

    const table = await screen.findByRole('table', {
      name: 'Preview of sim-1',
    });
    expect(seen).toEqual([
      {
        method: 'POST',
        path: '/api/fleet/applications/app-9/preview',
        body: { clusters: ['sim-1'], version: 'v2.1.0' },
      },
    ]);
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map(r => r.textContent)).toEqual([
      'ConfigMapledger-settingsledgerwill be created—',
      'Deploymentledger-apiledgerwill be updated/spec/replicas/spec/template/spec/containers/0/image',
      'Serviceledger-apiledgerunchanged—',
      'CronJobledger-nightly-reportledgerwill be pruned—',
    ]);
    expect(
      within(rows[1]).getByRole('list', {
        name: 'Changed paths of Deployment ledger-api',
      }),
    ).toHaveTextContent('/spec/replicas/spec/template/spec/containers/0/image');
    expect(screen.getByRole('heading', { name: /^sim-1:/ })).toHaveTextContent(
      'sim-1: 1 to create, 1 to update, 1 unchanged, 1 to prune',
    );
    expect(
      screen.getByRole('link', { name: /^Source v2.1.0 at 3f9c2a1/ }),
    ).toHaveAttribute(
      'href',
      'https://github.com/acme/ledger/tree/v2.1.0/deploy',
    );

    expect(deploy).toBeEnabled();
    await userEvent.click(deploy);
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(onDeployed).toHaveBeenCalledWith(
      expect.objectContaining({ entityRef: LEDGER, cluster: 'sim-1' }),
    );
    expect(seen[1]).toEqual({
      method: 'POST',
      path: '/api/fleet/deployments',
      body: { entityRef: LEDGER, cluster: 'sim-1', version: 'v2.1.0' },
    });
  });

  it('asks for a new preview once an input changes', async () => {
    const seen = serve({});
    await renderDialog();
    await userEvent.click(
      await screen.findByRole('button', { name: 'Preview' }),
    );
    await screen.findByRole('table', { name: 'Preview of sim-1' });
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeEnabled();

    await userEvent.type(
      screen.getByRole('textbox', { name: 'Version' }),
      'main',
    );
    expect(
      screen.queryByRole('table', { name: 'Preview of sim-1' }),
    ).toBeNull();
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeDisabled();

    await userEvent.click(screen.getByRole('button', { name: 'Preview' }));
    await screen.findByRole('table', { name: 'Preview of sim-1' });
    expect(seen.map(s => s.body)).toEqual([
      { clusters: ['sim-1'] },
      { clusters: ['sim-1'], version: 'main' },
    ]);
  });

  it('asks for a new preview when the dialog opens again', async () => {
    const seen = serve({});
    const { setOpen } = await renderDialog();
    await userEvent.click(
      await screen.findByRole('button', { name: 'Preview' }),
    );
    await screen.findByRole('table', { name: 'Preview of sim-1' });
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeEnabled();

    setOpen(false);
    setOpen(true);
    expect(
      await screen.findByRole('button', { name: 'Preview' }),
    ).toBeEnabled();
    expect(
      screen.queryByRole('table', { name: 'Preview of sim-1' }),
    ).toBeNull();
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeDisabled();
    expect(seen).toHaveLength(1);
  });

  it("shows a refused cluster's message and keeps Deploy disabled when every cluster is refused", async () => {
    const seen = serve({
      preview: () => HttpResponse.json(previewOf('sim-2')),
    });
    await renderDialog();
    await pickCluster('sim-2');
    await userEvent.click(
      await screen.findByRole('button', { name: 'Preview' }),
    );
    expect(
      await screen.findByRole('alert', { name: 'sim-2 refused' }),
    ).toHaveTextContent(
      "Project 'finance' does not allow kind ClusterRole on cluster 'sim-2'",
    );
    expect(
      screen.queryByRole('table', { name: 'Preview of sim-2' }),
    ).toBeNull();
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeDisabled();
    expect(seen).toHaveLength(1);
    expect(seen[0].body).toEqual({ clusters: ['sim-2'] });
  });

  it("shows the API's error when the preview fails, and keeps Deploy disabled", async () => {
    serve({
      preview: () =>
        fleetError(
          'InputError',
          "Could not read the manifests of component:default/ledger at 'nope': no such ref",
          400,
        ),
    });
    await renderDialog();
    await userEvent.type(
      screen.getByRole('textbox', { name: 'Version' }),
      'nope',
    );
    await userEvent.click(
      await screen.findByRole('button', { name: 'Preview' }),
    );
    expect(await screen.findByRole('alert')).toHaveTextContent(
      "Could not preview: Could not read the manifests of component:default/ledger at 'nope': no such ref",
    );
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeDisabled();
  });

  it('refuses a version that is no branch, tag or commit before calling the API', async () => {
    const seen = serve({});
    await renderDialog();
    await userEvent.type(
      screen.getByRole('textbox', { name: 'Version' }),
      '-rf main',
    );
    expect(
      screen.getByText(/A branch, a tag or a commit: letters, digits/),
    ).toBeInTheDocument();
    expect(
      await screen.findByRole('button', { name: 'Preview' }),
    ).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeDisabled();
    expect(seen).toEqual([]);
  });

  it('deploys a first time without a preview, saying there is nothing to preview against', async () => {
    const seen = serve({ applications: [] });
    await renderDialog();
    expect(
      await screen.findByText(/This first deploy registers the application/),
    ).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Preview' })).toBeNull();
    await userEvent.type(
      screen.getByRole('textbox', { name: 'Version' }),
      'v1.0.0',
    );
    await userEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    await waitFor(() => expect(seen).toHaveLength(1));
    expect(seen).toEqual([
      {
        method: 'POST',
        path: '/api/fleet/deployments',
        body: { entityRef: LEDGER, cluster: 'sim-1', version: 'v1.0.0' },
      },
    ]);
  });

  it('previews a release to several clusters, one refused, and releases the version to them', async () => {
    const seen = serve({});
    server.use(
      http.post(
        `${fleetBase}/applications/:id/preview`,
        async ({ request }) => {
          seen.push(await seenRequest(request));
          return HttpResponse.json(manifestsPreview());
        },
      ),
    );
    const { onReleased } = await renderDialog({ releases: true });
    const several = await screen.findByRole('radio', {
      name: 'Several clusters (release)',
    });
    await waitFor(() => expect(several).toBeEnabled());
    await userEvent.click(several);
    await userEvent.click(screen.getByRole('checkbox', { name: /sim-1/ }));
    await userEvent.click(screen.getByRole('checkbox', { name: /sim-2/ }));
    await userEvent.type(
      screen.getByRole('textbox', { name: 'Version' }),
      'v2.1.0',
    );
    expect(screen.getByRole('button', { name: 'Release' })).toBeDisabled();

    await userEvent.click(screen.getByRole('button', { name: 'Preview' }));
    await screen.findByRole('table', { name: 'Preview of sim-1' });
    expect(screen.getByRole('alert', { name: 'sim-2 refused' })).toBeVisible();
    expect(seen[0].body).toEqual({
      clusters: ['sim-1', 'sim-2'],
      version: 'v2.1.0',
    });

    await userEvent.click(screen.getByRole('button', { name: 'Release' }));
    expect(
      await screen.findByRole('status', { name: 'Release result' }),
    ).toHaveTextContent('Released to sim-1.');
    expect(onReleased).toHaveBeenCalled();
    expect(seen[1]).toEqual({
      method: 'POST',
      path: '/api/fleet/applications/app-9/releases',
      body: { version: 'v2.1.0', clusters: ['sim-1', 'sim-2'] },
    });
    // The result replaces the preview.
    expect(
      screen.queryByRole('table', { name: 'Preview of sim-1' }),
    ).toBeNull();
  });
});
