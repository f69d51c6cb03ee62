import {
  AuthorizeResult,
  type EvaluatePermissionRequest,
} from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import {
  mockApis,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import { ResponseError } from '@backstage/errors';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { SWRConfig } from 'swr';
import { fleetApiRef } from '../../api';
import {
  application,
  cluster,
  mockFleetApi,
  release,
} from '../../testUtils/fixtures';
import { DeployDialog } from './DeployDialog';

const clusters = [
  cluster('sim-1', 'ONLINE'),
  cluster('sim-2', 'OFFLINE'),
  cluster('sim-3', 'UNKNOWN'),
];

const PLACED = 'Every cluster the application is placed on (release)';
const SEVERAL = 'Several clusters (release)';

/** The dialog of payments, offering releases; every permission allowed unless told. */
async function renderDialog(
  api = mockFleetApi({
    listApplications: jest.fn().mockResolvedValue([application()]),
  }),
  authorize?: (
    request: EvaluatePermissionRequest,
  ) => AuthorizeResult.ALLOW | AuthorizeResult.DENY,
) {
  const onReleased = jest.fn();
  const onDeployed = jest.fn();
  await renderInTestApp(
    <TestApiProvider
      apis={[
        [fleetApiRef, api],
        [permissionApiRef, mockApis.permission({ authorize })],
      ]}
    >
      <SWRConfig value={{ provider: () => new Map() }}>
        <DeployDialog
          open
          entityRef="component:default/payments"
          clusters={clusters}
          defaultImage="ghcr.io/acme/payments:1.5.0"
          onClose={jest.fn()}
          onDeployed={onDeployed}
          onReleased={onReleased}
        />
      </SWRConfig>
    </TestApiProvider>,
  );
  return { api, onReleased, onDeployed };
}

describe('DeployDialog releases', () => {
  it('releases to every placed cluster of the application and shows the skipped ones', async () => {
    const created = release(['sim-1', 'sim-3'], ['sim-2']);
    const { api, onReleased, onDeployed } = await renderDialog(
      mockFleetApi({
        listApplications: jest.fn().mockResolvedValue([application('app-7')]),
        createRelease: jest.fn().mockResolvedValue(created),
      }),
    );
    const placed = await screen.findByRole('radio', { name: PLACED });
    await waitFor(() => expect(placed).toBeEnabled());
    await userEvent.click(placed);
    expect(
      screen.queryByRole('button', { name: 'Cluster' }),
    ).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Release' }));

    expect(api.listApplications).toHaveBeenCalledWith({
      entityRef: 'component:default/payments',
    });
    expect(api.createRelease).toHaveBeenCalledWith('app-7', {
      image: 'ghcr.io/acme/payments:1.5.0',
    });
    expect(api.createDeployment).not.toHaveBeenCalled();
    const result = await screen.findByRole('status', {
      name: 'Release result',
    });
    expect(result).toHaveTextContent('Released to sim-1, sim-3.');
    expect(
      within(result).getByRole('list', { name: 'Skipped clusters' }),
    ).toHaveTextContent("sim-2: Cluster 'sim-2' is OFFLINE");
    expect(onReleased).toHaveBeenCalledWith(created);
    expect(onDeployed).not.toHaveBeenCalled();
  });

  it('releases to the clusters picked, with the replicas', async () => {
    const { api } = await renderDialog(
      mockFleetApi({
        listApplications: jest.fn().mockResolvedValue([application()]),
        createRelease: jest.fn().mockResolvedValue(release(['sim-3'])),
      }),
    );
    const several = await screen.findByRole('radio', { name: SEVERAL });
    await waitFor(() => expect(several).toBeEnabled());
    await userEvent.click(several);
    const picker = screen.getByRole('group', {
      name: 'Clusters to release to',
    });
    expect(
      within(picker).getByRole('checkbox', { name: 'sim-2 — OFFLINE' }),
    ).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Release' })).toBeDisabled();
    await userEvent.click(
      within(picker).getByRole('checkbox', { name: 'sim-3 — UNKNOWN' }),
    );
    await userEvent.type(screen.getByLabelText('Replicas'), '3');
    await userEvent.click(screen.getByRole('button', { name: 'Release' }));
    expect(api.createRelease).toHaveBeenCalledWith('app-1', {
      image: 'ghcr.io/acme/payments:1.5.0',
      replicas: 3,
      clusters: ['sim-3'],
    });
    expect(
      await screen.findByRole('status', { name: 'Release result' }),
    ).toHaveTextContent('Released to sim-3.');
  });

  it('shows a refused release in the words the API used', async () => {
    const response = new Response(
      JSON.stringify({
        error: {
          name: 'ConflictError',
          message:
            "Application 'app-1' is placed on no cluster; nothing to release",
        },
        response: { statusCode: 409 },
      }),
      { status: 409, headers: { 'Content-Type': 'application/json' } },
    );
    const error = await ResponseError.fromResponse(response as any);
    await renderDialog(
      mockFleetApi({
        listApplications: jest.fn().mockResolvedValue([application()]),
        createRelease: jest.fn().mockRejectedValue(error),
      }),
    );
    const placed = await screen.findByRole('radio', { name: PLACED });
    await waitFor(() => expect(placed).toBeEnabled());
    await userEvent.click(placed);
    await userEvent.click(screen.getByRole('button', { name: 'Release' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      "Application 'app-1' is placed on no cluster; nothing to release",
    );
  });

  it('disables the release choices with a tooltip when fleet.release.manage is denied on the component', async () => {
    const asked: string[] = [];
    await renderDialog(undefined, request => {
      asked.push(`${request.permission.name} ${request.resourceRef}`);
      return request.permission.name === 'fleet.release.manage'
        ? AuthorizeResult.DENY
        : AuthorizeResult.ALLOW;
    });
    await waitFor(() =>
      expect(asked).toContain(
        'fleet.release.manage component:default/payments',
      ),
    );
    // The application is there: only the permission keeps the choices disabled.
    await waitFor(() =>
      expect(screen.getByRole('radio', { name: PLACED })).toBeDisabled(),
    );
    expect(screen.getByRole('radio', { name: SEVERAL })).toBeDisabled();
    expect(screen.getByRole('radio', { name: 'One cluster' })).toBeChecked();
    await userEvent.hover(screen.getByText(PLACED));
    expect(await screen.findByRole('tooltip')).toHaveTextContent(
      'You are not allowed to release payments',
    );
    // The single-cluster deploy is still there.
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeEnabled();
  });

  it('disables the release choices until the component has an application, saying to deploy it first', async () => {
    const { api } = await renderDialog(
      mockFleetApi({ listApplications: jest.fn().mockResolvedValue([]) }),
    );
    expect(
      await screen.findByText(
        'component:default/payments has no Fleet application yet: deploy it to one cluster first, then release it to several',
      ),
    ).toBeInTheDocument();
    expect(screen.getByRole('radio', { name: PLACED })).toBeDisabled();
    expect(screen.getByRole('radio', { name: SEVERAL })).toBeDisabled();
    expect(api.listApplications).toHaveBeenCalledWith({
      entityRef: 'component:default/payments',
    });
  });
});
