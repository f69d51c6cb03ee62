import {
  AuthorizeResult,
  type EvaluatePermissionRequest,
} from '@backstage/plugin-permission-common';

type DecisionResult = AuthorizeResult.ALLOW | AuthorizeResult.DENY;
import { mockApis } from '@backstage/test-utils';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  deployment,
  event,
  mockFleetApi,
  revision,
} from '../../testUtils/fixtures';
import { renderDeploymentsCard } from './__testUtils__/renderDeploymentsCard';

/** The table row of the deployment on `clusterName`. */
async function row(clusterName: string) {
  const table = await screen.findByRole('table', { name: 'Deployments' });
  return within(table).getByText(clusterName).closest('tr') as HTMLElement;
}

/** One DEPLOYED deployment on sim-1 (with a revision to roll back to), these permission answers. */
function renderWithPermissions(
  authorize: (request: EvaluatePermissionRequest) => DecisionResult,
) {
  return renderDeploymentsCard(
    mockFleetApi({
      listDeployments: jest
        .fn()
        .mockResolvedValue([deployment('sim-1', 'DEPLOYED', { revision: 2 })]),
    }),
    { permissionApi: mockApis.permission({ authorize }) },
  );
}

describe('EntityFleetDeploymentsCard actions', () => {
  it('sums up the fleet in its header: versions per cluster count, then sync totals', async () => {
    await renderDeploymentsCard(
      mockFleetApi({
        listDeployments: jest.fn().mockResolvedValue([
          deployment('sim-1', 'DEPLOYED'),
          deployment('sim-2', 'DEPLOYED', {
            image: 'ghcr.io/acme/payments:1.4.1',
            syncStatus: 'OUT_OF_SYNC',
          }),
          deployment('sim-3', 'DEPLOYED'),
          deployment('sim-4', 'PROGRESSING'),
          deployment('sim-5', 'PENDING', { syncStatus: 'UNKNOWN' }),
        ]),
      }),
    );
    expect(
      await screen.findByText('1.4.2 on 4 clusters, 1.4.1 on 1; 3 of 5 SYNCED'),
    ).toBeInTheDocument();
  });

  it('lists the revisions and events of a deployment in its history', async () => {
    const api = await renderDeploymentsCard(
      mockFleetApi({
        listDeployments: jest
          .fn()
          .mockResolvedValue([
            deployment('sim-1', 'DEPLOYED', { revision: 3 }),
          ]),
        listRevisions: jest.fn().mockResolvedValue([
          revision('sim-1', 3, '1.4.1', {
            cause: 'auto-rollback',
            createdBy: 'fleet-reconciler',
            outcomeReason: 'ROLLED_BACK',
          }),
          revision('sim-1', 2, '1.5.0', {
            outcome: 'FAILED',
            outcomeReason: 'PROGRESS_DEADLINE_EXCEEDED',
          }),
          revision('sim-1', 1, '1.4.1'),
        ]),
        listDeploymentEvents: jest.fn().mockResolvedValue([
          {
            ...event,
            subjectKind: 'deployment',
            subject: 'dep-sim-1',
            from: 'PROGRESSING',
            to: 'FAILED',
            reason: 'PROGRESS_DEADLINE_EXCEEDED',
          },
        ]),
      }),
    );
    await userEvent.click(
      within(await row('sim-1')).getByRole('button', {
        name: 'History on sim-1',
      }),
    );
    const dialog = await screen.findByRole('dialog', {
      name: 'History of payments on sim-1',
    });
    const revisions = within(
      await within(dialog).findByRole('table', { name: 'Revisions' }),
    )
      .getAllByRole('row')
      .slice(1);
    expect(revisions).toHaveLength(3);
    expect(revisions[0]).toHaveTextContent(
      /3 \(current\).*ghcr.io\/acme\/payments:1.4.1.*auto-rollback.*fleet-reconciler.*(just now|\d+ seconds ago).*DEPLOYED — Rolled back: a newer revision failed.*\(ROLLED_BACK\)/,
    );
    expect(revisions[1]).toHaveTextContent(
      /2.*payments:1.5.0.*deploy.*alice.*FAILED — Rollout missed its deadline \(PROGRESS_DEADLINE_EXCEEDED\)/,
    );
    expect(
      within(dialog).getByRole('list', { name: 'Events' }),
    ).toHaveTextContent('PROGRESSING → FAILED — Rollout missed its deadline');
    expect(api.listRevisions).toHaveBeenCalledWith('dep-sim-1');
    expect(api.listDeploymentEvents).toHaveBeenCalledWith('dep-sim-1');
  });

  it('rolls back to the picked revision, offering the newest earlier DEPLOYED one first', async () => {
    const listDeployments = jest
      .fn()
      .mockResolvedValue([deployment('sim-1', 'DEPLOYED', { revision: 4 })]);
    const api = await renderDeploymentsCard(
      mockFleetApi({
        listDeployments,
        listRevisions: jest
          .fn()
          .mockResolvedValue([
            revision('sim-1', 4, '1.5.1'),
            revision('sim-1', 3, '1.5.0', { outcome: 'FAILED' }),
            revision('sim-1', 2, '1.4.2'),
            revision('sim-1', 1, '1.4.1'),
          ]),
        rollback: jest
          .fn()
          .mockResolvedValue(deployment('sim-1', 'PROGRESSING')),
      }),
    );
    await userEvent.click(
      within(await row('sim-1')).getByRole('button', {
        name: 'Rollback on sim-1',
      }),
    );
    const dialog = await screen.findByRole('dialog', {
      name: 'Roll back payments on sim-1?',
    });
    const radio = async (n: number) =>
      within(dialog).findByRole('radio', {
        name: new RegExp(`^Revision ${n}`),
      });
    expect(await radio(4)).toBeDisabled();
    expect(await radio(2)).toBeChecked();
    await userEvent.click(await radio(1));
    const callsBefore = listDeployments.mock.calls.length;
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Roll back to revision 1' }),
    );
    expect(api.rollback).toHaveBeenCalledWith('dep-sim-1', 1);
    await waitFor(() =>
      expect(screen.queryByRole('dialog')).not.toBeInTheDocument(),
    );
    expect(listDeployments.mock.calls.length).toBeGreaterThan(callsBefore);
  });

  it('shows why a rollback was refused in the words of the API', async () => {
    await renderDeploymentsCard(
      mockFleetApi({
        listDeployments: jest
          .fn()
          .mockResolvedValue([
            deployment('sim-1', 'DEPLOYED', { revision: 2 }),
          ]),
        listRevisions: jest
          .fn()
          .mockResolvedValue([
            revision('sim-1', 2, '1.4.2'),
            revision('sim-1', 1, '1.4.1'),
          ]),
        rollback: jest.fn().mockRejectedValue(
          Object.assign(new Error('Request failed with 409 Conflict'), {
            body: {
              error: {
                name: 'ConflictError',
                message: "Cluster 'sim-1' is OFFLINE; rollbacks wait for it",
              },
            },
          }),
        ),
      }),
    );
    await userEvent.click(
      within(await row('sim-1')).getByRole('button', {
        name: 'Rollback on sim-1',
      }),
    );
    const dialog = await screen.findByRole('dialog');
    await userEvent.click(
      await within(dialog).findByRole('button', {
        name: 'Roll back to revision 1',
      }),
    );
    expect(await within(dialog).findByRole('alert')).toHaveTextContent(
      "Cluster 'sim-1' is OFFLINE; rollbacks wait for it",
    );
  });

  it('asks before undeploying, naming the cluster, then shows the deployment as REMOVING without actions', async () => {
    const listDeployments = jest
      .fn()
      .mockResolvedValueOnce([
        deployment('sim-1', 'DEPLOYED'),
        deployment('sim-2', 'DEPLOYED'),
      ])
      .mockResolvedValue([
        deployment('sim-1', 'DEPLOYED'),
        deployment('sim-2', 'REMOVING'),
      ]);
    const api = await renderDeploymentsCard(
      mockFleetApi({
        listDeployments,
        undeploy: jest.fn().mockResolvedValue(deployment('sim-2', 'REMOVING')),
      }),
    );
    await userEvent.click(
      within(await row('sim-2')).getByRole('button', {
        name: 'Undeploy from sim-2',
      }),
    );
    const dialog = await screen.findByRole('dialog', {
      name: 'Undeploy payments from sim-2?',
    });
    expect(api.undeploy).not.toHaveBeenCalled();
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Undeploy' }),
    );
    expect(api.undeploy).toHaveBeenCalledWith('dep-sim-2');
    expect(
      await within(await row('sim-2')).findByLabelText(
        'Deployment status: REMOVING',
      ),
    ).toBeInTheDocument();
    expect(within(await row('sim-2')).queryAllByRole('button')).toEqual([]);
    expect(within(await row('sim-1')).getAllByRole('button')).toHaveLength(3);
  });

  it('disables Deploy, Rollback and Undeploy with a reason when the permission is denied, checked on the component', async () => {
    const asked: string[] = [];
    await renderWithPermissions(request => {
      asked.push(`${request.permission.name} ${request.resourceRef}`);
      return AuthorizeResult.DENY;
    });
    const actions = within(await row('sim-1'));
    await waitFor(() =>
      expect(
        actions.getByRole('button', { name: 'Undeploy from sim-1' }),
      ).toBeDisabled(),
    );
    expect(
      actions.getByRole('button', { name: 'Rollback on sim-1' }),
    ).toBeDisabled();
    expect(
      actions.getByRole('button', { name: 'History on sim-1' }),
    ).toBeEnabled();
    expect(screen.getByRole('button', { name: 'Deploy' })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Release' })).toBeDisabled();

    await userEvent.hover(
      actions.getByRole('button', { name: 'Undeploy from sim-1' })
        .parentElement as HTMLElement,
    );
    expect(await screen.findByRole('tooltip')).toHaveTextContent(
      'You are not allowed to undeploy payments',
    );
    expect([...new Set(asked)].sort()).toEqual([
      'fleet.deployment.create component:default/payments',
      'fleet.deployment.delete component:default/payments',
      'fleet.release.manage component:default/payments',
    ]);
  });

  it('allows what the policy allows: Rollback without Undeploy', async () => {
    await renderWithPermissions(request =>
      request.permission.name === 'fleet.deployment.delete'
        ? AuthorizeResult.DENY
        : AuthorizeResult.ALLOW,
    );
    const actions = within(await row('sim-1'));
    await waitFor(() =>
      expect(
        actions.getByRole('button', { name: 'Rollback on sim-1' }),
      ).toBeEnabled(),
    );
    expect(
      actions.getByRole('button', { name: 'Undeploy from sim-1' }),
    ).toBeDisabled();
  });

  it('says in words when a deployment is no longer placed', async () => {
    await renderDeploymentsCard(
      mockFleetApi({
        listDeployments: jest
          .fn()
          .mockResolvedValue([
            deployment('sim-1', 'DEPLOYED'),
            deployment('sim-2', 'DEPLOYED', { placed: false }),
          ]),
      }),
    );
    expect(await row('sim-2')).toHaveTextContent('no longer placed');
    expect(await row('sim-1')).not.toHaveTextContent('no longer placed');
  });
});
