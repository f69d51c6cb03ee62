import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { ResponseError } from '@backstage/errors';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fleetApiRef } from '../../api';
import {
  application,
  cluster,
  deployment,
  manifestsPreview,
  mockFleetApi,
} from '../../testUtils/fixtures';
import { DeployDialog } from './DeployDialog';

const clusters = [
  cluster('sim-1', 'ONLINE'),
  cluster('sim-2', 'OFFLINE'),
  cluster('sim-3', 'UNKNOWN'),
];

async function renderDialog(
  api = mockFleetApi(),
  props: Partial<Parameters<typeof DeployDialog>[0]> = {},
) {
  const onDeployed = jest.fn();
  const onClose = jest.fn();
  await renderInTestApp(
    <TestApiProvider apis={[[fleetApiRef, api]]}>
      <DeployDialog
        open
        entityRef="component:default/payments"
        clusters={clusters}
        preferredClusters={['sim-2', 'sim-1']}
        defaultImage="ghcr.io/acme/payments:1.4.2"
        onClose={onClose}
        onDeployed={onDeployed}
        {...props}
      />
    </TestApiProvider>,
  );
  return { api, onDeployed, onClose };
}

describe('DeployDialog', () => {
  it('prefills the image from cnp.io/image and picks the first cluster that is not OFFLINE', async () => {
    await renderDialog();
    expect(screen.getByLabelText('Image')).toHaveValue(
      'ghcr.io/acme/payments:1.4.2',
    );
    expect(
      screen.getByText('From the cnp.io/image annotation'),
    ).toBeInTheDocument();
    // sim-2 is preferred but OFFLINE, so sim-1 is chosen
    expect(screen.getByRole('button', { name: 'Cluster' })).toHaveTextContent(
      'sim-1 — ONLINE',
    );
  });

  it('shows an OFFLINE cluster disabled in the picker, with its reason', async () => {
    await renderDialog();
    await userEvent.click(screen.getByRole('button', { name: 'Cluster' }));
    const listbox = await screen.findByRole('listbox');
    const offline = within(listbox).getByText('sim-2 — OFFLINE').closest('li')!;
    expect(offline).toHaveAttribute('aria-disabled', 'true');
    expect(
      within(offline).getByText('Unavailable: Outage confirmed'),
    ).toBeInTheDocument();
    const unknown = within(listbox).getByText('sim-3 — UNKNOWN').closest('li')!;
    expect(unknown).not.toHaveAttribute('aria-disabled', 'true');
  });

  it('deploys with the chosen cluster, image and replicas', async () => {
    const created = deployment('sim-3', 'PROGRESSING');
    const { api, onDeployed, onClose } = await renderDialog(
      mockFleetApi({ createDeployment: jest.fn().mockResolvedValue(created) }),
    );
    await userEvent.click(screen.getByRole('button', { name: 'Cluster' }));
    await userEvent.click(await screen.findByText('sim-3 — UNKNOWN'));
    await userEvent.type(screen.getByLabelText('Replicas'), '2');
    await userEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect(api.createDeployment).toHaveBeenCalledWith({
      entityRef: 'component:default/payments',
      cluster: 'sim-3',
      image: 'ghcr.io/acme/payments:1.4.2',
      replicas: 2,
    });
    expect(onDeployed).toHaveBeenCalledWith(created);
    expect(onClose).toHaveBeenCalled();
  });

  it('offers a preview of a generated workload but deploys without one', async () => {
    const { api } = await renderDialog(
      mockFleetApi({
        listApplications: jest.fn().mockResolvedValue([application()]),
        previewApplication: jest.fn().mockResolvedValue(manifestsPreview()),
        createDeployment: jest
          .fn()
          .mockResolvedValue(deployment('sim-1', 'PROGRESSING')),
      }),
    );
    expect(screen.queryByRole('textbox', { name: 'Version' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeEnabled();
    await userEvent.click(
      await screen.findByRole('button', { name: 'Preview' }),
    );
    expect(
      await screen.findByRole('table', { name: 'Preview of sim-1' }),
    ).toBeInTheDocument();
    expect(api.previewApplication).toHaveBeenCalledWith('app-1', {
      clusters: ['sim-1'],
      image: 'ghcr.io/acme/payments:1.4.2',
    });
    await userEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect(api.createDeployment).toHaveBeenCalledWith({
      entityRef: 'component:default/payments',
      cluster: 'sim-1',
      image: 'ghcr.io/acme/payments:1.4.2',
    });
  });

  it('shows a 409 from the API in the words the API used', async () => {
    const body = {
      error: {
        name: 'ConflictError',
        message:
          "Cluster 'sim-1' is OFFLINE; deployments to it are refused until it is back ONLINE",
      },
      response: { statusCode: 409 },
    };
    const response = new Response(JSON.stringify(body), {
      status: 409,
      statusText: 'Conflict',
      headers: { 'Content-Type': 'application/json' },
    });
    const error = await ResponseError.fromResponse(response as any);
    const { onClose } = await renderDialog(
      mockFleetApi({ createDeployment: jest.fn().mockRejectedValue(error) }),
    );
    await userEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      "Cluster 'sim-1' is OFFLINE; deployments to it are refused until it is back ONLINE",
    );
    expect(onClose).not.toHaveBeenCalled();
  });

  it('refuses a blank image and bad replicas before calling the API', async () => {
    const { api } = await renderDialog(mockFleetApi(), {
      defaultImage: undefined,
    });
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeDisabled();
    await userEvent.type(screen.getByLabelText('Image'), 'nginx:1.27');
    await userEvent.type(screen.getByLabelText('Replicas'), '-3');
    expect(
      screen.getByText('A whole number from 0 to 1000'),
    ).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeDisabled();
    expect(api.createDeployment).not.toHaveBeenCalled();
  });
});
